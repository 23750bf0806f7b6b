package dev.herald.contract;

import java.util.Map;

/**
 * What the user sees and the app receives, as the sender gave it.
 *
 * @param title     visible title, may be null for data-only pushes
 * @param body      visible body, may be null
 * @param data      string key/value data handed to the app
 * @param overrides per-platform overrides, merged into the provider request as given:
 *                  {@code fcm} into FCM's {@code message} object (e.g. {@code android}, {@code webpush}),
 *                  {@code apns} into the APNs payload (e.g. {@code aps} fields)
 */
public record Notification(String title, String body, Map<String, String> data,
                           Map<String, Map<String, Object>> overrides) {
    public Notification {
        data = data == null ? Map.of() : Map.copyOf(data);
        overrides = overrides == null ? Map.of() : Map.copyOf(overrides);
    }

    public Map<String, Object> override(Channel channel) {
        return overrides.getOrDefault(channel.name(), Map.of());
    }
}
