package dev.herald.contract.payload;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** Builds the APNs JSON payload: {@code aps.alert} from title and body, data as custom keys. */
public final class ApnsPayloads {
    private ApnsPayloads() {
    }

    public static Map<String, Object> payload(PushBatch batch) {
        Notification notification = batch.notification();
        Map<String, Object> aps = new LinkedHashMap<>();
        if (notification.title() != null || notification.body() != null) {
            Map<String, Object> alert = new LinkedHashMap<>();
            if (notification.title() != null) {
                alert.put("title", notification.title());
            }
            if (notification.body() != null) {
                alert.put("body", notification.body());
            }
            aps.put("alert", alert);
        } else {
            aps.put("content-available", 1);
        }
        Map<String, Object> payload = new LinkedHashMap<>(notification.data());
        payload.put(Notification.MESSAGE_ID_KEY, batch.messageId());
        payload.put("aps", aps);
        Map<String, Object> overrides = new LinkedHashMap<>(notification.override(Channel.apns));
        mergeInto(payload, overrides);
        return payload;
    }

    /** APNs overrides are merged one level deep into {@code aps} and the top level. */
    @SuppressWarnings("unchecked")
    private static void mergeInto(Map<String, Object> payload, Map<String, Object> overrides) {
        overrides.forEach((key, value) -> {
            if (value instanceof Map<?, ?> nested && payload.get(key) instanceof Map<?, ?> existing) {
                Map<String, Object> merged = new LinkedHashMap<>((Map<String, Object>) existing);
                merged.putAll((Map<String, Object>) nested);
                payload.put(key, merged);
            } else {
                payload.put(key, value);
            }
        });
    }

    public static boolean alert(PushBatch batch) {
        return batch.notification().title() != null || batch.notification().body() != null;
    }

    /** Whether APNs should deliver at once (priority 10): a high-priority alert; APNs refuses 10 for background pushes. */
    public static boolean immediate(PushBatch batch) {
        return batch.priority() == Priority.high && alert(batch);
    }

    /**
     * The APNs request headers that depend on the message, as the HTTP/2 request carries them
     * ({@code apns-topic} when the app's credential names one).
     */
    public static Map<String, String> headers(PushBatch batch, Optional<String> topic) {
        Map<String, String> headers = new LinkedHashMap<>();
        topic.ifPresent(value -> headers.put("apns-topic", value));
        headers.put("apns-push-type", alert(batch) ? "alert" : "background");
        headers.put("apns-priority", immediate(batch) ? "10" : "5");
        headers.put("apns-expiration", Long.toString(batch.expiresAt().getEpochSecond()));
        if (batch.collapseKey() != null) {
            headers.put("apns-collapse-id", batch.collapseKey());
        }
        return headers;
    }
}
