package dev.herald.gateway.delivery;

import dev.herald.gateway.GatewayProperties;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter, each wait drawn from [cap/2, cap] (so retries of a throttled burst spread out instead of
 * arriving together), never shorter than the provider's Retry-After.
 */
public final class Backoff {
    private final GatewayProperties.Retry retry;

    public Backoff(GatewayProperties.Retry retry) {
        this.retry = retry;
    }

    /** The wait before attempt {@code attempt + 1}, after {@code attempt} attempts (1-based). */
    public Duration before(int attempt, Duration retryAfter) {
        long cap = Math.min(retry.maxBackoff().toMillis(),
                retry.initialBackoff().toMillis() << Math.min(attempt - 1, 20));
        long jittered = ThreadLocalRandom.current().nextLong(cap / 2, cap + 1);
        return Duration.ofMillis(Math.max(jittered, retryAfter.toMillis()));
    }

    public boolean exhausted(int attempts) {
        return attempts >= retry.maxAttempts();
    }

    /** A Retry-After longer than this is not worth holding the delivery for. */
    public boolean tooLong(Duration retryAfter) {
        return retryAfter.compareTo(retry.maxRetryAfter()) > 0;
    }
}
