package dev.herald.sandbox.fcm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/**
 * FCM's error answers: {@code {"error": {"code", "message", "status", "details": [...]}}} with a
 * {@code google.firebase.fcm.v1.FcmError} detail carrying the error code clients switch on, and a
 * {@code google.rpc.BadRequest} detail naming the field for validation errors. The fixed answers
 * are rendered once, since faults can make them as frequent as successes.
 */
final class FcmErrors {
    static final String FCM_ERROR_TYPE = "type.googleapis.com/google.firebase.fcm.v1.FcmError";
    static final String BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest";

    final FcmAnswer unauthenticated;
    final FcmAnswer unregistered;
    final FcmAnswer badToken;
    final FcmAnswer unavailable;
    /** With the one-second Retry-After of {@code throttled<N>-} tokens and the default setting. */
    private final FcmAnswer quotaExceeded;
    private final JsonMapper json;

    FcmErrors(JsonMapper json) {
        this.json = json;
        this.unauthenticated = answer(401, "Request had invalid authentication credentials. Expected OAuth 2 access token,"
                + " login cookie or other valid authentication credential."
                + " See https://developers.google.com/identity/sign-in/web/devconsole-project.",
                "UNAUTHENTICATED", null, null, -1);
        this.unregistered = answer(404, "Requested entity was not found.", "NOT_FOUND", "UNREGISTERED", null, -1);
        this.badToken = invalidArgument("The registration token is not a valid FCM registration token", null);
        this.unavailable = answer(503, "The service is currently unavailable.", "UNAVAILABLE", "UNAVAILABLE", null, -1);
        this.quotaExceeded = quotaExceededAnswer(1);
    }

    FcmAnswer quotaExceeded(long retryAfterSeconds) {
        return retryAfterSeconds == 1 ? quotaExceeded : quotaExceededAnswer(retryAfterSeconds);
    }

    private FcmAnswer quotaExceededAnswer(long retryAfterSeconds) {
        return answer(429, "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute'"
                + " of service 'fcm.googleapis.com' (provider sandbox fault injection).",
                "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", null, retryAfterSeconds);
    }

    /** 400 INVALID_ARGUMENT; {@code field} (like {@code message.data[0].value}) adds a BadRequest detail. */
    FcmAnswer invalidArgument(String message, String field) {
        return answer(400, message, "INVALID_ARGUMENT", "INVALID_ARGUMENT", field, -1);
    }

    private FcmAnswer answer(int code, String message, String status, String errorCode, String field, long retryAfter) {
        List<Map<String, Object>> details = new ArrayList<>();
        if (errorCode != null) {
            details.add(Map.of("@type", FCM_ERROR_TYPE, "errorCode", errorCode));
        }
        if (field != null) {
            details.add(Map.of("@type", BAD_REQUEST_TYPE,
                    "fieldViolations", List.of(Map.of("field", field, "description", message))));
        }
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", message);
        error.put("status", status);
        if (!details.isEmpty()) {
            error.put("details", details);
        }
        byte[] body = json.writeValueAsBytes(Map.of("error", error));
        return new FcmAnswer(code, body, errorCode != null ? errorCode : status, retryAfter);
    }
}
