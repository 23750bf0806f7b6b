package dev.herald.store.device;

import dev.herald.contract.Channel;
import dev.herald.contract.Target;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;

/**
 * A registered device of an app: how it is reached, which topics it follows and (optionally) its
 * IANA time zone, for sends at a local time.
 */
public record Device(String appId, String deviceId, Channel channel, String token, Set<String> topics, Instant updatedAt,
                     Optional<String> timeZone) {
    public Device {
        topics = Set.copyOf(topics);
    }

    public Device(String appId, String deviceId, Channel channel, String token, Set<String> topics, Instant updatedAt) {
        this(appId, deviceId, channel, token, topics, updatedAt, Optional.empty());
    }

    public Target target() {
        return new Target(channel, token, deviceId);
    }
}
