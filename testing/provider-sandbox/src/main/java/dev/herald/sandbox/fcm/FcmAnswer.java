package dev.herald.sandbox.fcm;

import java.nio.charset.StandardCharsets;

/**
 * What the sandbox answers one send.
 *
 * @param body       the JSON body, encoded once (the fixed error answers are shared by all requests)
 * @param outcome    {@code accepted} or the rejection reason (FCM error code, or status when there is none)
 * @param retryAfter seconds for the {@code Retry-After} header, or -1 for none
 */
record FcmAnswer(int status, byte[] body, String outcome, long retryAfter) {

    static FcmAnswer accepted(String json) {
        return new FcmAnswer(200, json.getBytes(StandardCharsets.UTF_8), "accepted", -1);
    }

    boolean accepted() {
        return status == 200;
    }
}
