package dev.herald.gateway.fcm;

import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.contract.payload.FcmRequests;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReferenceArray;
import tools.jackson.databind.json.JsonMapper;

/**
 * The JSON bodies of FCM requests. The targets of one batch get the same body but for the token
 * (and the remaining ttl, which changes by the second): the body is serialized once per batch and
 * ttl with a placeholder token, and each target's token is put in the placeholder's place (Jackson
 * serializing a body per target was about 5% of the gateway's samples in the fan-out profile). The
 * body is byte for byte what {@link FcmRequests#body} serializes to; where a token would need
 * escaping in JSON, or an override replaces the token, it is serialized whole.
 */
final class FcmBodies {
    /** Recent batches' templates, by the batch's identity: its targets are sent close together. */
    private static final int SLOTS = 16;

    private final JsonMapper json;
    private final String placeholder = "herald-token-" + UUID.randomUUID();
    private final byte[] quotedPlaceholder = ('"' + placeholder + '"').getBytes(StandardCharsets.UTF_8);
    private final AtomicReferenceArray<Template> recent = new AtomicReferenceArray<>(SLOTS);

    FcmBodies(JsonMapper json) {
        this.json = json;
    }

    byte[] body(PushBatch batch, Target target, Instant now) {
        if (!plain(target.token())) {
            return json.writeValueAsBytes(FcmRequests.body(batch, target, now));
        }
        long ttl = FcmRequests.ttlSeconds(batch, now);
        int slot = System.identityHashCode(batch) & (SLOTS - 1);
        Template template = recent.get(slot);
        if (template == null || template.batch != batch || template.ttlSeconds != ttl) {
            template = template(batch, ttl, now);
            recent.set(slot, template);
        }
        if (template.head == null) {
            return json.writeValueAsBytes(FcmRequests.body(batch, target, now));
        }
        byte[] token = target.token().getBytes(StandardCharsets.US_ASCII);
        byte[] body = new byte[template.head.length + token.length + template.tail.length];
        System.arraycopy(template.head, 0, body, 0, template.head.length);
        System.arraycopy(token, 0, body, template.head.length, token.length);
        System.arraycopy(template.tail, 0, body, template.head.length + token.length, template.tail.length);
        return body;
    }

    private Template template(PushBatch batch, long ttl, Instant now) {
        byte[] whole = json.writeValueAsBytes(FcmRequests.body(batch, new Target(Channel.fcm, placeholder, null), now));
        int at = indexOf(whole, quotedPlaceholder);
        if (at < 0 || indexOf(Arrays.copyOfRange(whole, at + 1, whole.length), quotedPlaceholder) >= 0) {
            return new Template(batch, ttl, null, null);   // an override replaced (or copied) the token
        }
        return new Template(batch, ttl, Arrays.copyOfRange(whole, 0, at + 1),
                Arrays.copyOfRange(whole, at + quotedPlaceholder.length - 1, whole.length));
    }

    /** Only characters no JSON writer escapes, as in FCM's tokens: letters, digits and {@code -_:.}. */
    private static boolean plain(String token) {
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            boolean plain = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
                    || c == '-' || c == '_' || c == ':' || c == '.';
            if (!plain) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] data, byte[] part) {
        outer:
        for (int i = 0; i <= data.length - part.length; i++) {
            for (int j = 0; j < part.length; j++) {
                if (data[i + j] != part[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** One batch's body split around the token; {@code head} null if the body cannot be split. */
    private record Template(PushBatch batch, long ttlSeconds, byte[] head, byte[] tail) {
    }
}
