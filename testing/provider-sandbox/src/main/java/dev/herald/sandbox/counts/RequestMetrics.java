package dev.herald.sandbox.counts;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Component;

/**
 * Prometheus view of provider requests: {@code herald_sandbox_requests_total{provider,outcome}}
 * (outcome {@code accepted} or the provider's rejection reason, a small fixed set) and
 * {@code herald_sandbox_request_latency_seconds{provider}}, which includes the injected latency.
 * Meters are cached because registry look-ups per request would allocate on the hot path.
 */
@Component
public class RequestMetrics {
    private final MeterRegistry registry;
    private final Map<Provider, Timer> latency = new EnumMap<>(Provider.class);
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();

    public RequestMetrics(MeterRegistry registry) {
        this.registry = registry;
        for (Provider provider : Provider.values()) {
            latency.put(provider, Timer.builder("herald.sandbox.request.latency")
                    .description("Time from request to answer, including injected latency")
                    .tag("provider", provider.name())
                    .register(registry));
        }
    }

    public void answered(Provider provider, String outcome, long startNanos) {
        latency.get(provider).record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
        counters.computeIfAbsent(provider.name() + '/' + outcome, key -> Counter.builder("herald.sandbox.requests")
                .description("Provider requests by outcome (accepted or rejection reason)")
                .tag("provider", provider.name())
                .tag("outcome", outcome)
                .register(registry)).increment();
    }
}
