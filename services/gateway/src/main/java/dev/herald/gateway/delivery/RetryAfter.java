package dev.herald.gateway.delivery;

import java.time.Duration;

/** A provider's {@code Retry-After} header in seconds; the HTTP-date form and garbage count as none. */
public final class RetryAfter {
    private RetryAfter() {
    }

    /** {@link Duration#ZERO} when absent or unreadable: the gateway's own backoff applies then. */
    public static Duration parse(String header) {
        if (header == null || header.isBlank()) {
            return Duration.ZERO;
        }
        try {
            return Duration.ofSeconds(Math.max(0, Long.parseLong(header.trim())));
        } catch (NumberFormatException dateForm) {
            return Duration.ZERO;
        }
    }
}
