package dev.herald.gateway.consume;

import com.rabbitmq.client.Channel;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
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
 *
 * <p>Work whose channel closes under it (its RabbitMQ node died, the connection broke) is stopped:
 * RabbitMQ requeues the delivery and hands it to a consumer on the new connection at once, and two
 * copies of one batch running side by side would each send, and dead-letter, the targets neither has
 * recorded yet (BrokerAndCacheFaultsIT, a node of three killed). Stopped work starts no request, but
 * the requests already sent finish and are recorded, so the redelivery skips them: cancelling those
 * too left every one of them sent and unrecorded, and sent again (30 to 61 of a 64-request window on
 * a RabbitMQ restart). Only work still running after the drain timeout is cancelled; what is in
 * flight when the redelivery reads the batch's outcomes is the window a crash leaves too.
 *
 * <p>The one way work honours the mark: it reads it before each step that sends or publishes (a
 * provider request in BatchDelivery, a page of an audience in AudienceExpander) and, once it is set,
 * starts no such step. A send's target not yet sent ends unrecorded; an expansion waits for the
 * cancel, since ending would count the audience expanded.
 */
public final class PendingWork implements ApplicationListener<ContextClosedEvent> {
    private static final Logger log = LoggerFactory.getLogger(PendingWork.class);

    private static final String DELIVERY_COUNT = "x-delivery-count";
    private static final long FIRST_PAUSE_MS = 1_000;
    private static final long LONGEST_PAUSE_MS = 15_000;

    /** Work in hand: the future the container acks on -> the running work and the channel it came on. */
    private final Map<CompletableFuture<Void>, InHand> pending = new HashMap<>();
    /** Channels with a shutdown listener that stops their work. */
    private final Set<Channel> watched = ConcurrentHashMap.newKeySet();
    private final ListenerConsumers consumers;
    private final Duration drainTimeout;
    private boolean closed;

    public PendingWork(ListenerConsumers consumers, Duration drainTimeout) {
        this.consumers = consumers;
        this.drainTimeout = drainTimeout;
    }

    /**
     * Starts a delivery's work ({@code start}, given the mark that tells it it is being stopped) and
     * tracks it until its future completes (the container acks then).
     * Once the drain is over the work is not started: the delivery stays unacked and is requeued
     * when the channel closes, for a replica that keeps running. Nor is the work of a delivery
     * whose channel is closed already (a consumer still handing over what it fetched before).
     *
     * <p>Work that fails (Redis or RabbitMQ unavailable, full, or restarting) is handed back for
     * requeueing only after {@link #requeueDelay}: a requeued delivery comes back at once, and the
     * quorum queues dead-letter a delivery at its 20th attempt, so without the pause a few seconds
     * of Redis refusing writes sent whole batches to the dead-letter queue (BrokerAndCacheFaultsIT).
     */
    public CompletableFuture<Void> track(Message delivery, Function<BooleanSupplier, CompletableFuture<Void>> start) {
        Duration pause = requeueDelay(delivery);
        Channel source = consumers.openChannelOf(delivery.getMessageProperties().getConsumerTag()).orElse(null);
        CompletableFuture<Void> work;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("gateway stopping: delivery left to be requeued");
            }
            if (source == null) {
                throw new IllegalStateException("the delivery's channel is closed: RabbitMQ requeues it");
            }
            AtomicBoolean stopped = new AtomicBoolean();
            CompletableFuture<Void> running = start.apply(stopped::get);
            work = running.exceptionallyCompose(error -> {
                CompletableFuture<Void> later = new CompletableFuture<>();
                CompletableFuture.delayedExecutor(pause.toMillis(), TimeUnit.MILLISECONDS)
                        .execute(() -> later.completeExceptionally(error));
                return later;
            });
            pending.put(work, new InHand(running, stopped, source));
        }
        if (watched.add(source)) {
            // Runs at once if the channel closed meanwhile.
            source.addShutdownListener(cause -> stopWorkOn(source));
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

    /**
     * Stops the work that came on {@code channel}: all of it is marked stopped at once (a request
     * not yet started is not started), and what still runs after the drain timeout (a request that
     * hangs) is cancelled, off the connection's thread (cancelling runs the work's cleanup).
     */
    private void stopWorkOn(Channel channel) {
        watched.remove(channel);
        List<InHand> lost;
        synchronized (this) {
            lost = pending.values().stream().filter(inHand -> inHand.channel() == channel).toList();
        }
        if (!lost.isEmpty()) {
            log.warn("channel {} closed: stopping the work of its {} deliveries, which RabbitMQ redelivers", channel, lost.size());
            lost.forEach(inHand -> inHand.stopped().set(true));
            CompletableFuture.delayedExecutor(drainTimeout.toMillis(), TimeUnit.MILLISECONDS,
                            Thread.ofVirtual().name("stop-lost-deliveries")::start)
                    .execute(() -> lost.forEach(inHand -> inHand.running().cancel(true)));
        }
    }

    /** A delivery's running work, its stop mark, and the channel it came on. */
    private record InHand(CompletableFuture<Void> running, AtomicBoolean stopped, Channel channel) {
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
                inHand = pending.keySet().toArray(CompletableFuture[]::new);
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
