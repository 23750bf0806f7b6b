package dev.herald.sandbox.faults;

import java.util.List;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * What the sandbox does to otherwise good requests. Also the JSON of {@code GET|PUT /sandbox/faults}.
 * The rates are probabilities of one draw per request, so together they may not exceed 1.
 *
 * @param latencyMs           added to every provider answer, accepted or not (a non-blocking delay)
 * @param unregisteredRate    share answered FCM 404 UNREGISTERED / APNs 410 Unregistered
 * @param tooManyRequestsRate share answered 429 (FCM QUOTA_EXCEEDED / APNs TooManyRequests)
 * @param retryAfterSeconds   {@code Retry-After} sent with those random 429s
 * @param unavailableRate     share answered 503 (FCM UNAVAILABLE / APNs ServiceUnavailable)
 * @param tooManyRequestsFor  a 429 storm: every request for these FCM project ids or APNs topics
 *                            (apns-topic) is answered 429 with {@code retryAfterSeconds}, whatever its token
 */
public record Faults(
        @DefaultValue("50") long latencyMs,
        @DefaultValue("0") double unregisteredRate,
        @DefaultValue("0") double tooManyRequestsRate,
        @DefaultValue("1") long retryAfterSeconds,
        @DefaultValue("0") double unavailableRate,
        @DefaultValue List<String> tooManyRequestsFor) {


    /** Upper bound on injected latency: beyond it clients time out and the numbers mean nothing. */
    public static final long MAX_LATENCY_MS = 60_000;

    public Faults {
        tooManyRequestsFor = tooManyRequestsFor == null ? List.of() : List.copyOf(tooManyRequestsFor);
        if (latencyMs < 0 || latencyMs > MAX_LATENCY_MS) {
            throw new IllegalArgumentException("latencyMs must be between 0 and " + MAX_LATENCY_MS + ", was " + latencyMs);
        }
        rate("unregisteredRate", unregisteredRate);
        rate("tooManyRequestsRate", tooManyRequestsRate);
        rate("unavailableRate", unavailableRate);
        if (unregisteredRate + tooManyRequestsRate + unavailableRate > 1.0 + 1e-9) {
            throw new IllegalArgumentException("unregisteredRate + tooManyRequestsRate + unavailableRate must not exceed 1, was "
                    + (unregisteredRate + tooManyRequestsRate + unavailableRate));
        }
        if (retryAfterSeconds < 0 || retryAfterSeconds > 3600) {
            throw new IllegalArgumentException("retryAfterSeconds must be between 0 and 3600, was " + retryAfterSeconds);
        }
    }

    private static void rate(String name, double value) {
        if (!(value >= 0.0 && value <= 1.0)) { // also rejects NaN
            throw new IllegalArgumentException(name + " must be between 0 and 1, was " + value);
        }
    }

    /** This with the fields that {@code update} sets replaced; validated as a whole. */
    public Faults with(FaultsUpdate update) {
        return new Faults(
                update.latencyMs() != null ? update.latencyMs() : latencyMs,
                update.unregisteredRate() != null ? update.unregisteredRate() : unregisteredRate,
                update.tooManyRequestsRate() != null ? update.tooManyRequestsRate() : tooManyRequestsRate,
                update.retryAfterSeconds() != null ? update.retryAfterSeconds() : retryAfterSeconds,
                update.unavailableRate() != null ? update.unavailableRate() : unavailableRate,
                update.tooManyRequestsFor() != null ? update.tooManyRequestsFor() : tooManyRequestsFor);
    }
}
