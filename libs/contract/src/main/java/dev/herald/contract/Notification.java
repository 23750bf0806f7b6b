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
    /** Data key under which the gateway adds the platform's message id, so apps can deduplicate. */
    public static final String MESSAGE_ID_KEY = "herald_message_id";

    /**
     * Bytes of a provider's 4 KB payload the platform itself uses: the message id entry and the
     * providers' JSON framing, which this record's own JSON form does not have.
     */
    public static final int PLATFORM_RESERVED_BYTES = 96;

    public Notification {
        data = data == null ? Map.of() : Map.copyOf(data);
        overrides = overrides == null ? Map.of() : Map.copyOf(overrides);
    }

    public Map<String, Object> override(Channel channel) {
        return overrides.getOrDefault(channel.name(), Map.of());
    }
}
