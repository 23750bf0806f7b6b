package dev.herald.gateway.quota;

import dev.herald.contract.Channel;
import dev.herald.contract.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Metrics of throttled sending. Unlike the other delivery metrics these are tagged by app: which
 * tenant is held back is the point, and apps are a short list the admin creates (never tokens or
 * message ids).
 */
public final class QuotaMetrics {
    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> waits = new ConcurrentHashMap<>();

    public QuotaMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Targets that had to wait (parked), by the provider they wait for and why. */
    public void throttled(String appId, List<Target> targets, DeliveryGate.Cause cause, Duration wait) {
        for (Target target : targets) {
            counter("herald.gateway.throttled", "Targets held back by a provider quota, a 429 pause or their message's throttle",
                    "app", appId, "provider", target.channel().name(), "cause", cause.name()).increment();
        }
        waits.computeIfAbsent(appId + "/" + cause, key -> Timer.builder("herald.gateway.throttle.wait")
                        .description("Wait until the next token when a batch is held back")
                        .tags("app", appId, "cause", cause.name())
                        .publishPercentileHistogram()
                        .minimumExpectedValue(Duration.ofMillis(1))
                        .maximumExpectedValue(Duration.ofMinutes(5))
                        .register(registry))
                .record(wait);
    }

    /** A provider answered 429 for the app. */
    public void providerThrottled(String appId, Channel channel) {
        counter("herald.gateway.provider.throttled", "Provider answers 429 (too many requests)",
                "app", appId, "provider", channel.name()).increment();
    }

    private Counter counter(String name, String description, String... tags) {
        return counters.computeIfAbsent(name + String.join(",", tags),
                key -> Counter.builder(name).description(description).tags(tags).register(registry));
    }
}
