package dev.herald.gateway.consume;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.Message;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;

/**
 * Deliveries whose work is still running. A graceful stop begins here, when the context closes and
 * before any lifecycle bean stops: the consumers are cancelled (no new deliveries), the work in hand
 * finishes and is acked on the channels it came on, which stay open until then, and only afterwards
 * do the listener containers stop and close them. So no delivery in hand goes back to the queue for
 * another replica to send again while this one sends it too, and the provider clients are still open.
 * Bounded by the shutdown timeout; work not done by then is requeued when the channels close.
 */
public final class PendingWork implements ApplicationListener<ContextClosedEvent> {
    private static final Logger log = LoggerFactory.getLogger(PendingWork.class);

    private static final String DELIVERY_COUNT = "x-delivery-count";
    private static final long FIRST_PAUSE_MS = 1_000;
    private static final long LONGEST_PAUSE_MS = 15_000;

    private final Set<CompletableFuture<Void>> pending = new HashSet<>();
    private final ListenerConsumers consumers;
    private final Duration drainTimeout;
    private boolean closed;

    public PendingWork(ListenerConsumers consumers, Duration drainTimeout) {
        this.consumers = consumers;
        this.drainTimeout = drainTimeout;
    }

    /**
     * Starts a delivery's work and tracks it until its future completes (the container acks then).
     * Once the drain is over the work is not started: the delivery stays unacked and is requeued
     * when the channel closes, for a replica that keeps running.
     *
     * <p>Work that fails (Redis or RabbitMQ unavailable, full, or restarting) is handed back for
     * requeueing only after {@link #requeueDelay}: a requeued delivery comes back at once, and the
     * quorum queues dead-letter a delivery at its 20th attempt, so without the pause a few seconds
     * of Redis refusing writes sent whole batches to the dead-letter queue (BrokerAndCacheFaultsIT).
     */
    public CompletableFuture<Void> track(Message delivery, Supplier<CompletableFuture<Void>> start) {
        Duration pause = requeueDelay(delivery);
        CompletableFuture<Void> work;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("gateway stopping: delivery left to be requeued");
            }
            work = start.get().exceptionallyCompose(error -> {
                CompletableFuture<Void> later = new CompletableFuture<>();
                CompletableFuture.delayedExecutor(pause.toMillis(), TimeUnit.MILLISECONDS)
                        .execute(() -> later.completeExceptionally(error));
                return later;
            });
            pending.add(work);
        }
        // The container adds its ack callback after this one, and a future runs its callbacks latest
        // first: the ack normally goes out before the work counts as done. Should it come after the
        // channel closed, the batch is redelivered and skips the targets already recorded.
        CompletableFuture<Void> tracked = work;
        work.whenComplete((ignored, error) -> remove(tracked));
        return work;
    }

    /**
     * The pause before a failed delivery goes back to its queue: {@value #FIRST_PAUSE_MS} ms on its
     * first delivery, doubling with each redelivery (RabbitMQ's {@code x-delivery-count}) up to
     * {@value #LONGEST_PAUSE_MS} ms. The 20 deliveries a quorum queue allows then span about four
     * minutes of an outage rather than a fraction of a second.
     */
    static Duration requeueDelay(Message delivery) {
        Object header = delivery.getMessageProperties().getHeader(DELIVERY_COUNT);
        long redeliveries = header instanceof Number count ? Math.max(0, count.longValue()) : 0;
        long pause = FIRST_PAUSE_MS << Math.min(redeliveries, 10);
        return Duration.ofMillis(Math.min(pause, LONGEST_PAUSE_MS));
    }

    public synchronized int size() {
        return pending.size();
    }

    private synchronized void remove(CompletableFuture<Void> work) {
        pending.remove(work);
    }

    @Override
    public void onApplicationEvent(ContextClosedEvent event) {
        int cancelled = consumers.cancelAll();
        log.info("cancelled {} consumers; waiting up to {} for {} deliveries in progress", cancelled, drainTimeout, size());
        long deadline = System.nanoTime() + drainTimeout.toNanos();
        while (true) {
            CompletableFuture<?>[] inHand;
            synchronized (this) {
                if (pending.isEmpty()) {
                    closed = true;
                    return;
                }
                inHand = pending.toArray(CompletableFuture[]::new);
            }
            // Deliveries already on their way to a cancelled consumer may still arrive: loop until none is left.
            try {
                CompletableFuture.allOf(inHand).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                synchronized (this) {
                    closed = true;
                    log.warn("{} deliveries still in progress after {}: they will be redelivered", pending.size(), drainTimeout);
                }
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                synchronized (this) {
                    closed = true;
                }
                return;
            } catch (ExecutionException e) {
                // A failed delivery is rejected by the container; the others are waited for in the next round.
            }
        }
    }
}
