package dev.herald.store.device;

import dev.herald.contract.Channel;
import dev.herald.contract.Target;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;

/**
 * A registered device of an app: how it is reached, which topics it follows and (optionally) its
 * IANA time zone, for sends at a local time.
 *
 * @param updatedAt when it last registered (a re-registration refreshes its token)
 * @param stale     whether that was longer ago than {@code herald.tokens.stale-after}: fan-outs leave it out
 */
public record Device(String appId, String deviceId, Channel channel, String token, Set<String> topics, Instant updatedAt,
                     boolean stale, Optional<String> timeZone) {
    public Device {
        topics = Set.copyOf(topics);
    }

    public Target target() {
        return new Target(channel, token, deviceId);
    }
}
