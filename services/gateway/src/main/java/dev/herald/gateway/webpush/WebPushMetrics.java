package dev.herald.gateway.webpush;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Web Push's own meter: encrypted body sizes, against the 4 KB push services take (outcomes,
 * latency and removed subscriptions are the delivery metrics with {@code provider="webpush"}).
 */
public final class WebPushMetrics {
    private final DistributionSummary bodyBytes;

    public WebPushMetrics(MeterRegistry registry) {
        this.bodyBytes = DistributionSummary.builder("herald.gateway.webpush.body")
                .description("Encrypted Web Push bodies (push services take at most 4096 bytes)")
                .baseUnit("bytes")
                .serviceLevelObjectives(1024, 2048, 3072, 4096)
                .register(registry);
    }

    void encrypted(int bytes) {
        bodyBytes.record(bytes);
    }
}
