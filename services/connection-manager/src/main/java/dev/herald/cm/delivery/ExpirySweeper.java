package dev.herald.cm.delivery;

import dev.herald.cm.CmMetrics;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.status.Outcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles as {@code expired} the box entries whose TTL passed while their device stayed away, so a
 * message to a device that never comes back still ends (a connected device's drain does the same for
 * its own box). Every node sweeps; settling is idempotent, so overlapping sweeps count nothing twice.
 */
public final class ExpirySweeper implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(ExpirySweeper.class);
    private static final int BOXES_PER_SWEEP = 500;

    private final MqttOutbox outbox;
    private final CmMetrics metrics;

    public ExpirySweeper(MqttOutbox outbox, CmMetrics metrics) {
        this.outbox = outbox;
        this.metrics = metrics;
    }

    @Override
    public void run() {
        try {
            sweep(System.currentTimeMillis()).join();
        } catch (RuntimeException e) {
            log.warn("expiry sweep failed: {}", e.toString());
        }
    }

    CompletableFuture<Void> sweep(long now) {
        return outbox.due(now, BOXES_PER_SWEEP).thenCompose(boxes -> CompletableFuture.allOf(
                boxes.stream().map(box -> sweep(box, now)).toArray(CompletableFuture[]::new)));
    }

    private CompletableFuture<Void> sweep(MqttOutbox.Box box, long now) {
        return outbox.read(box.appId(), box.deviceId()).thenCompose(entries -> {
            List<CompletableFuture<Boolean>> settled = entries.stream().filter(entry -> entry.expiresAt() <= now)
                    .map(entry -> outbox.settle(box.appId(), box.deviceId(), entry.messageId(), Outcome.expired())
                            .whenComplete((counted, error) -> {
                                if (Boolean.TRUE.equals(counted)) {
                                    metrics.expired();
                                }
                            }))
                    .toList();
            return CompletableFuture.allOf(settled.toArray(CompletableFuture[]::new));
        }).thenCompose(ignored -> outbox.reindex(box));
    }
}
