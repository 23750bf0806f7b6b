package dev.herald.contract.payload;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds FCM HTTP v1 {@code messages:send} bodies. */
public final class FcmRequests {

    private FcmRequests() {
    }

    public static Map<String, Object> body(PushBatch batch, Target target, Instant now) {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("token", target.token());
        if (batch.notification().title() != null || batch.notification().body() != null) {
            Map<String, Object> notification = new LinkedHashMap<>();
            if (batch.notification().title() != null) {
                notification.put("title", batch.notification().title());
            }
            if (batch.notification().body() != null) {
                notification.put("body", batch.notification().body());
            }
            message.put("notification", notification);
        }
        Map<String, String> data = new LinkedHashMap<>(batch.notification().data());
        data.put(Notification.MESSAGE_ID_KEY, batch.messageId());
        message.put("data", data);
        Map<String, Object> android = new LinkedHashMap<>();
        android.put("ttl", ttlSeconds(batch, now) + "s");
        android.put("priority", batch.priority() == Priority.high ? "high" : "normal");
        if (batch.collapseKey() != null) {
            android.put("collapse_key", batch.collapseKey());
        }
        message.put("android", android);
        deepMerge(message, batch.notification().override(Channel.fcm));
        return Map.of("message", message);
    }

    /** The message's remaining time to live at {@code now}, in whole seconds (FCM's {@code android.ttl}). */
    public static long ttlSeconds(PushBatch batch, Instant now) {
        return Math.max(0, Duration.between(now, batch.expiresAt()).toSeconds());
    }

    /** Overrides win; nested objects are merged rather than replaced, so {"android": {"priority": ...}} keeps the ttl. */
    @SuppressWarnings("unchecked")
    public static void deepMerge(Map<String, Object> base, Map<String, Object> overrides) {
        overrides.forEach((key, value) -> {
            if (value instanceof Map<?, ?> nested && base.get(key) instanceof Map<?, ?> existing) {
                Map<String, Object> merged = new LinkedHashMap<>((Map<String, Object>) existing);
                deepMerge(merged, (Map<String, Object>) nested);
                base.put(key, merged);
            } else {
                base.put(key, value);
            }
        });
    }
}
