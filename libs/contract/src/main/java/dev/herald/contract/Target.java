package dev.herald.contract;

import java.util.Objects;

/**
 * One destination of a push: a provider token on a channel, and the registered device it belongs
 * to when known (null for sends to raw tokens).
 *
 * @param channel  how the target is reached
 * @param token    the FCM registration token, APNs device token or, for MQTT, the device id
 * @param deviceId the registered device, or null
 */
public record Target(Channel channel, String token, String deviceId) {
    public Target {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(token, "token");
    }

    /** Identity used to deduplicate deliveries of one message. */
    public String key() {
        return channel + ":" + token;
    }
}
