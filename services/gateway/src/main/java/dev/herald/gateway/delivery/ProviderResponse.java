package dev.herald.gateway.delivery;

import java.time.Duration;
import java.util.Objects;

/**
 * What a provider answered. A rejection is a normal value (the provider spoke); a transport failure
 * (no answer) is an exception on the sender's Mono instead.
 */
public sealed interface ProviderResponse {

    Accepted ACCEPTED = new Accepted();
    HandedOff HANDED_OFF = new HandedOff();

    record Accepted() implements ProviderResponse {
    }

    /**
     * Taken over by a component that reports the final outcome itself: an MQTT message in its
     * device's box, which the connection manager settles on the device's PUBACK (or expiry).
     */
    record HandedOff() implements ProviderResponse {
    }

    /**
     * @param reason      the provider's reason code (UNREGISTERED, BadDeviceToken, QUOTA_EXCEEDED, ...)
     * @param disposition what the gateway should do about it
     * @param retryAfter  the provider's Retry-After, or {@link Duration#ZERO}
     */
    record Rejected(String reason, Disposition disposition, Duration retryAfter) implements ProviderResponse {
        public Rejected {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(disposition, "disposition");
            retryAfter = retryAfter == null ? Duration.ZERO : retryAfter;
        }
    }

    enum Disposition {
        /** The token is dead: remove it from the registry, do not retry. */
        TOKEN_INVALID,
        /** The request itself is wrong (payload, credential, topic): retrying cannot help. */
        PERMANENT,
        /** The provider is unavailable (or the credential must be refreshed): retry later. */
        RETRY,
        /**
         * The provider said "too many requests" (429): the app's sending to it pauses on every replica
         * for the Retry-After, and the target waits for its turn again without using up an attempt.
         */
        THROTTLED
    }

    /** Over the provider's rate for the app (429): wait {@code retryAfter} (zero: none given). */
    static Rejected throttled(String reason, Duration retryAfter) {
        return new Rejected(reason, Disposition.THROTTLED, retryAfter);
    }

    /** Unavailable: retry after {@code retryAfter} at the earliest. */
    static Rejected retry(String reason, Duration retryAfter) {
        return new Rejected(reason, Disposition.RETRY, retryAfter);
    }

    static Rejected permanent(String reason) {
        return new Rejected(reason, Disposition.PERMANENT, Duration.ZERO);
    }

    static Rejected tokenInvalid(String reason) {
        return new Rejected(reason, Disposition.TOKEN_INVALID, Duration.ZERO);
    }
}
