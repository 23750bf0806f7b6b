package dev.herald.store.device;

import dev.herald.contract.Channel;
import dev.herald.contract.Target;
import java.time.Instant;
import java.util.Set;

/** A registered device of an app: how it is reached and which topics it follows. */
public record Device(String appId, String deviceId, Channel channel, String token, Set<String> topics, Instant updatedAt) {
    public Device {
        topics = Set.copyOf(topics);
    }

    public Target target() {
        return new Target(channel, token, deviceId);
    }
}
