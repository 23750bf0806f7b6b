package dev.herald.gateway.delivery;

import dev.herald.contract.Channel;
import dev.herald.store.status.Outcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The gateway's delivery metrics. Tags are provider and reason only (both small, closed sets),
 * never app, token or message id.
 */
public final class DeliveryMetrics {
    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    /** The counters of each target's outcome, by a key made without building a string per target. */
    private final Map<OutcomeKey, Counter> outcomeCounters = new ConcurrentHashMap<>();
    private final Map<Channel, Timer> latency = new ConcurrentHashMap<>();
    private final LongAdder outcomes = new LongAdder();

    public DeliveryMetrics(MeterRegistry registry, InFlightLimit limit) {
        this.registry = registry;
        Gauge.builder("herald.gateway.in.flight", limit, InFlightLimit::inFlight)
                .description("Provider requests in flight").register(registry);
        Gauge.builder("herald.gateway.waiting", limit, InFlightLimit::waiting)
                .description("Targets waiting for an in-flight permit").register(registry);
        cancelled(0); // exported from the start, so a dashboard shows 0 rather than no data
    }

    private record OutcomeKey(Channel channel, Outcome.Kind kind, String reason, boolean tokenRemoved) {
    }

    public void outcome(Channel channel, Outcome outcome) {
        outcomes.increment();
        String reason = outcome.reason() == null ? "none" : outcome.reason();
        outcomeCounters.computeIfAbsent(new OutcomeKey(channel, outcome.kind(), reason, false), key -> counter(
                "herald.gateway." + key.kind().name(), "Targets by final outcome",
                "provider", key.channel().name(), "reason", key.reason())).increment();
        if (outcome.tokenRemoved()) {
            outcomeCounters.computeIfAbsent(new OutcomeKey(channel, outcome.kind(), reason, true), key -> counter(
                    "herald.gateway.tokens.removed", "Dead tokens removed from the registry",
                    "provider", key.channel().name(), "reason", key.reason())).increment();
        }
    }

    /** Targets that reached a final outcome on this replica since it started: its lease's deliveries per second. */
    public long outcomes() {
        return outcomes.sum();
    }

    /** Time from API accept to the provider's acceptance. */
    public void accepted(Channel channel, Duration sinceAccept) {
        latency.computeIfAbsent(channel, c -> Timer.builder("herald.gateway.accept.to.provider")
                        .description("Time from API accept to provider acceptance")
                        .tag("provider", c.name())
                        .publishPercentileHistogram()
                        .minimumExpectedValue(Duration.ofMillis(1))
                        .maximumExpectedValue(Duration.ofMinutes(5))
                        .register(registry))
                .record(sinceAccept);
    }

    public void retry(Channel channel, String reason) {
        counter("herald.gateway.retries", "Provider attempts retried", "provider", channel.name(), "reason", reason).increment();
    }

    public void deadLettered(Channel channel, String reason) {
        counter("herald.gateway.dead.lettered", "Targets sent to the dead-letter queue",
                "provider", channel.name(), "reason", reason).increment();
    }

    /** Targets ended as cancelled, never sent, because their message was cancelled. */
    public void cancelled(long targets) {
        counter("herald.gateway.targets.cancelled", "Targets not sent because their message was cancelled").increment(targets);
    }

    public void duplicateSkipped() {
        counter("herald.gateway.duplicates.skipped", "Targets of redelivered work already finished").increment();
    }

    private Counter counter(String name, String description, String... tags) {
        String key = name + String.join(",", tags);
        return counters.computeIfAbsent(key, k -> Counter.builder(name).description(description).tags(tags).register(registry));
    }
}
