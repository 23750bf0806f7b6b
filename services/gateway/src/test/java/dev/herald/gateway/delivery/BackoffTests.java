package dev.herald.gateway.delivery;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.gateway.GatewayProperties;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTests {
    private final Backoff backoff = new Backoff(new GatewayProperties.Retry(4, Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ofSeconds(10)));

    @Test
    void growsExponentiallyWithinJitterBoundsAndCap() {
        for (int i = 0; i < 200; i++) {
            assertThat(backoff.before(1, Duration.ZERO)).isBetween(Duration.ofMillis(50), Duration.ofMillis(100));
            assertThat(backoff.before(3, Duration.ZERO)).isBetween(Duration.ofMillis(200), Duration.ofMillis(400));
            assertThat(backoff.before(10, Duration.ZERO)).isBetween(Duration.ofMillis(500), Duration.ofSeconds(1));
        }
    }

    @Test
    void honoursALongerRetryAfter() {
        assertThat(backoff.before(1, Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void countsAttemptsAndRefusesUnreasonableRetryAfter() {
        assertThat(backoff.exhausted(3)).isFalse();
        assertThat(backoff.exhausted(4)).isTrue();
        assertThat(backoff.tooLong(Duration.ofSeconds(11))).isTrue();
        assertThat(backoff.tooLong(Duration.ofSeconds(10))).isFalse();
    }
}
