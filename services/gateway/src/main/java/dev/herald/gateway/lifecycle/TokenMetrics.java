package dev.herald.gateway.lifecycle;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/** The token lifecycle's metrics; untagged (per-app figures are in each app's statistics). */
public final class TokenMetrics {
    private final Counter skipped;
    private final Counter removed;
    private final AtomicLong stale = new AtomicLong();

    public TokenMetrics(MeterRegistry registry) {
        skipped = Counter.builder("herald.gateway.tokens.stale.skipped")
                .description("Audience members left out of fan-outs because their token is stale").register(registry);
        removed = Counter.builder("herald.gateway.tokens.stale.removed")
                .description("Devices removed by the token sweep because their token went unrefreshed too long").register(registry);
        Gauge.builder("herald.gateway.tokens.stale", stale, AtomicLong::get)
                .description("Stale devices across all apps at this replica's last sweep (0 on replicas that did not sweep)")
                .register(registry);
    }

    public void staleSkipped(int devices) {
        skipped.increment(devices);
    }

    void removed(long devices) {
        removed.increment(devices);
    }

    void staleNow(long devices) {
        stale.set(devices);
    }
}
