package dev.herald.gateway.fcm;

import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.RetryAfter;
import java.time.Duration;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads FCM's answer: 200 is accepted; errors carry {@code error.status} and, in
 * {@code error.details[].errorCode}, the FCM-specific code (UNREGISTERED, QUOTA_EXCEEDED, ...).
 */
final class FcmResponses {
    private FcmResponses() {
    }

    static ProviderResponse read(int status, String retryAfterHeader, String body, JsonMapper json) {
        if (status == 200) {
            return ProviderResponse.ACCEPTED;
        }
        String code = errorCode(body, json, status);
        Duration retryAfter = RetryAfter.parse(retryAfterHeader);
        if ("UNREGISTERED".equals(code)) {
            return ProviderResponse.tokenInvalid(code);
        }
        if (status == 429) {
            return ProviderResponse.throttled(code, retryAfter);
        }
        if (status >= 500 || status == 401) {
            // 401: the access token was revoked or expired early; a fresh one is fetched for the retry.
            return ProviderResponse.retry(code, retryAfter);
        }
        return ProviderResponse.permanent(code);
    }

    private static String errorCode(String body, JsonMapper json, int status) {
        try {
            JsonNode error = json.readTree(body).path("error");
            for (JsonNode detail : error.path("details")) {
                if (detail.hasNonNull("errorCode")) {
                    return detail.get("errorCode").asString();
                }
            }
            if (error.hasNonNull("status")) {
                return error.get("status").asString();
            }
        } catch (RuntimeException notJson) {
            // An intermediary (load balancer) answered; fall through to the HTTP status.
        }
        return "HTTP_" + status;
    }
}
