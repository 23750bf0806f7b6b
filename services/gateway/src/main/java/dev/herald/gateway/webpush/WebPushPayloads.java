package dev.herald.gateway.webpush;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.PushBatch;
import dev.herald.contract.payload.FcmRequests;
import dev.herald.store.webpush.P256;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * What a service worker's {@code push} event reads with {@code event.data.json()}:
 * {@code {"title", "body", "data": {..., "herald_message_id"}}}, with the send's {@code webpush}
 * overrides merged in (e.g. {@code icon}, {@code tag}, {@code url}).
 */
final class WebPushPayloads {
    /** RFC 8030 section 5.4: a Topic is at most 32 characters of the base64url alphabet. */
    private static final Pattern TOPIC = Pattern.compile("[A-Za-z0-9_-]{1,32}");

    private WebPushPayloads() {
    }

    static Map<String, Object> payload(PushBatch batch) {
        Notification notification = batch.notification();
        Map<String, Object> payload = new LinkedHashMap<>();
        if (notification.title() != null) {
            payload.put("title", notification.title());
        }
        if (notification.body() != null) {
            payload.put("body", notification.body());
        }
        Map<String, String> data = new LinkedHashMap<>(notification.data());
        data.put(Notification.MESSAGE_ID_KEY, batch.messageId());
        payload.put("data", data);
        FcmRequests.deepMerge(payload, notification.override(Channel.webpush));
        return payload;
    }

    /**
     * The {@code Topic} header for a collapse key: the key itself when it is a valid topic, else a
     * digest of it in that alphabet (equal keys still collapse).
     */
    static String topic(String collapseKey) {
        if (TOPIC.matcher(collapseKey).matches()) {
            return collapseKey;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(collapseKey.getBytes(StandardCharsets.UTF_8));
            return P256.base64url(digest).substring(0, 32);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
