package dev.herald.dispatcher.send;

import dev.herald.contract.Priority;
import dev.herald.contract.amqp.PublishFailedException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * The send path's meters. Tags are low-cardinality by design (no app or message ids):
 * <ul>
 * <li>{@code herald.dispatcher.accepted} (kind = tokens|devices|topic, priority): messages answered 202;</li>
 * <li>{@code herald.dispatcher.published} (queue): messages RabbitMQ confirmed;</li>
 * <li>{@code herald.dispatcher.publish.failures} (reason): sends answered 503 because RabbitMQ did not confirm;</li>
 * <li>{@code herald.dispatcher.publish.latency}: from the first publish to the last confirm of a send;</li>
 * <li>{@code herald.dispatcher.idempotent.replays}: sends answered from an earlier request with the same key;</li>
 * <li>{@code herald.dispatcher.mqtt.handoffs} (placement = live|boxed|failed): single-device MQTT sends the
 * dispatcher handed to the device's node itself (live), or queued for the gateway because the device was
 * offline (boxed) or a step failed (failed).</li>
 * </ul>
 */
public final class SendMetrics {
    private final MeterRegistry registry;
    private final Timer latency;
    private final Counter replays;

    public SendMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.latency = Timer.builder("herald.dispatcher.publish.latency")
                .description("Time from the first publish of a send to the last RabbitMQ confirm")
                .publishPercentileHistogram()
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        this.replays = Counter.builder("herald.dispatcher.idempotent.replays")
                .description("Sends answered from an earlier request with the same Idempotency-Key")
                .register(registry);
        for (String kind : new String[] {"tokens", "devices", "topic"}) {
            for (Priority priority : Priority.values()) {
                accepted(kind, priority); // registered up front so dashboards see zeros
            }
        }
        for (PublishFailedException.Reason reason : PublishFailedException.Reason.values()) {
            failures(reason);
        }
        for (String placement : new String[] {"live", "boxed", "failed"}) {
            mqttHandoffs(placement);
        }
    }

    private Counter accepted(String kind, Priority priority) {
        return Counter.builder("herald.dispatcher.accepted")
                .description("Messages accepted (answered 202)")
                .tag("kind", kind).tag("priority", priority.name())
                .register(registry);
    }

    private Counter failures(PublishFailedException.Reason reason) {
        return Counter.builder("herald.dispatcher.publish.failures")
                .description("Sends refused with 503 because RabbitMQ did not confirm them")
                .tag("reason", reason.name())
                .register(registry);
    }

    void accepted(SendPlan.Kind kind, Priority priority) {
        accepted(kind.name(), priority).increment();
    }

    void published(String queue) {
        Counter.builder("herald.dispatcher.published")
                .description("Messages (token batches or audience jobs) confirmed by RabbitMQ")
                .tag("queue", queue)
                .register(registry)
                .increment();
    }

    void failed(PublishFailedException.Reason reason) {
        failures(reason).increment();
    }

    void latency(long nanos) {
        latency.record(Duration.ofNanos(nanos));
    }

    private Counter mqttHandoffs(String placement) {
        return Counter.builder("herald.dispatcher.mqtt.handoffs")
                .description("Single-device MQTT sends the dispatcher handed to the device's node (live) or queued (boxed, failed)")
                .tag("placement", placement)
                .register(registry);
    }

    void mqttHandoff(String placement) {
        mqttHandoffs(placement).increment();
    }

    void replayed() {
        replays.increment();
    }
}
