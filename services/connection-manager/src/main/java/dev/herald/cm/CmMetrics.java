package dev.herald.cm;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** The connection manager's meters, all named {@code herald.cm.*} (Prometheus: {@code herald_cm_*}). */
public final class CmMetrics {
    private final AtomicInteger connections = new AtomicInteger();
    private final Counter accepted;
    private final Counter refused;
    private final Counter delivered;
    private final Counter expired;
    private final Counter closedBadInput;
    private final Timer pubackLatency;
    private final DistributionSummary boxSize;

    public CmMetrics(MeterRegistry registry) {
        Gauge.builder("herald.cm.connections", connections, AtomicInteger::get)
                .description("Open MQTT connections").register(registry);
        accepted = Counter.builder("herald.cm.connects").tag("result", "accepted")
                .description("MQTT CONNECTs by result").register(registry);
        refused = Counter.builder("herald.cm.connects").tag("result", "refused")
                .description("MQTT CONNECTs by result").register(registry);
        delivered = Counter.builder("herald.cm.delivered").description("Messages acknowledged by devices (PUBACK)").register(registry);
        expired = Counter.builder("herald.cm.expired").description("Messages whose TTL passed before delivery").register(registry);
        closedBadInput = Counter.builder("herald.cm.closed.bad.input")
                .description("Connections closed for malformed, oversized or forbidden packets").register(registry);
        pubackLatency = Timer.builder("herald.cm.puback.latency").description("Time from PUBLISH to the device's PUBACK")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofMinutes(1))
                .register(registry);
        boxSize = DistributionSummary.builder("herald.cm.offline.store.size")
                .description("Messages waiting in a device's box (offline store) when its session starts").register(registry);
    }

    public void opened() {
        connections.incrementAndGet();
    }

    public void closed() {
        connections.decrementAndGet();
    }

    public void connect(boolean ok) {
        (ok ? accepted : refused).increment();
    }

    public void delivered(long publishedNanos) {
        delivered.increment();
        pubackLatency.record(Duration.ofNanos(System.nanoTime() - publishedNanos));
    }

    public void expired() {
        expired.increment();
    }

    public void badInput() {
        closedBadInput.increment();
    }

    public void boxSize(int entries) {
        boxSize.record(entries);
    }
}
