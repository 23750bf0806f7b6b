package dev.herald.gateway.webpush;

import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.RetryAfter;

/**
 * Reads a push service's answer (RFC 8030): 201 Created is accepted (some services say 200 or
 * 202); 404 and 410 mean the subscription is gone for good, so the device is removed; 429 pauses
 * the app; 5xx is retried. Push services give no machine-readable reason, so the reason is named
 * after the status.
 */
final class WebPushResponses {
    private WebPushResponses() {
    }

    static ProviderResponse read(int status, String retryAfterHeader) {
        return switch (status) {
            case 200, 201, 202 -> ProviderResponse.ACCEPTED;
            case 404 -> ProviderResponse.tokenInvalid("NOT_FOUND");
            case 410 -> ProviderResponse.tokenInvalid("GONE");
            case 413 -> ProviderResponse.permanent("PAYLOAD_TOO_LARGE");
            // The push service refused the VAPID token: the app's key pair does not match the one the
            // browser subscribed with, which retrying cannot change.
            case 401, 403 -> ProviderResponse.permanent("VAPID_REJECTED");
            case 429 -> ProviderResponse.throttled("TOO_MANY_REQUESTS", RetryAfter.parse(retryAfterHeader));
            default -> status >= 500
                    ? ProviderResponse.retry("HTTP_" + status, RetryAfter.parse(retryAfterHeader))
                    : ProviderResponse.permanent("HTTP_" + status);
        };
    }
}
