package dev.herald.dispatcher.send;

import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.ConfirmedPublisher.Outgoing;
import dev.herald.contract.amqp.PublishFailedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * Publishes one-batch sends to their send queue, the ones that arrive together in one queue message:
 * group commit. While no message of a queue awaits RabbitMQ's confirm, a send goes out at once, alone,
 * as a plain {@link PushBatch}; meanwhile sends wait, and leave together when that confirm arrives, in
 * one message (a JSON array of batches, {@link Queues#BATCHES_HEADER} giving their count) of at most
 * {@code batchSize} targets, the most a send's own batch carries. An idle platform never makes a send
 * wait; a busy one makes it wait at most one confirm for its turn.
 *
 * <p>Why: a quorum-queue message costs RabbitMQ a Raft command, a WAL entry and a confirm whatever its
 * size, and the Dispatcher a publish and a confirm to match. At thousands of single-token sends a
 * second those per-message costs were a third of the machine's CPU per accepted send, and the wait
 * for the confirm two thirds of each request's time; grouped, RabbitMQ's share fell by about a third
 * and the accept rate rose by a fifth ({@code docs/benchmarks.md}).
 *
 * <p>Each caller still waits for its own confirm: its 202 follows RabbitMQ's confirm of the message that
 * carried it, and a message nacked, returned or unconfirmed fails every send in it. A send whose
 * caller gave up before it left is withdrawn, never published after its client got a 503.
 */
public final class SendQueueCoalescer {
    private final Function<Outgoing, CompletableFuture<Void>> publisher;
    private final int batchSize;
    private final Duration timeout;
    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();

    /**
     * @param publisher publishes one message and completes when RabbitMQ confirmed it
     *                  ({@code ConfirmedPublisher::publish})
     * @param batchSize the most targets one message carries (a lone send's batch may carry them all)
     * @param timeout   how long a caller waits for its confirm; a message not confirmed by then no
     *                  longer holds up its queue's next one
     */
    public SendQueueCoalescer(Function<Outgoing, CompletableFuture<Void>> publisher, int batchSize, Duration timeout) {
        this.publisher = publisher;
        this.batchSize = batchSize;
        this.timeout = timeout;
    }

    /**
     * Publishes {@code outgoing}, whose body is a {@link PushBatch}, and returns when the message
     * carrying it is confirmed and routed.
     *
     * @throws PublishFailedException as {@link ConfirmedPublisher#publishAll}
     */
    public void publish(Outgoing outgoing) throws PublishFailedException {
        if (!(outgoing.body() instanceof PushBatch)) {
            throw new IllegalArgumentException("only push batches are grouped, not " + outgoing.body().getClass());
        }
        Waiting send = new Waiting(outgoing, new CompletableFuture<>());
        Lane lane = lanes.computeIfAbsent(outgoing.exchange() + " " + outgoing.routingKey(), key -> new Lane());
        if (lane.admit(send)) {
            lane.publish(List.of(send));
        }
        try {
            ConfirmedPublisher.await(send.confirmed, System.nanoTime() + timeout.toNanos(), timeout);
        } catch (PublishFailedException e) {
            if (e.reason() == PublishFailedException.Reason.timeout || e.reason() == PublishFailedException.Reason.interrupted) {
                lane.withdraw(send);
            }
            throw e;
        }
    }

    /** Sends waiting for their queue's message out to be confirmed, over all queues. */
    int waiting() {
        return lanes.values().stream().mapToInt(Lane::waiting).sum();
    }

    private record Waiting(Outgoing outgoing, CompletableFuture<Void> confirmed) {
        int targets() {
            return ((PushBatch) outgoing.body()).targets().size();
        }
    }

    /** One queue: whether a message of it awaits its confirm, and the sends waiting for that. */
    private final class Lane {
        private final ReentrantLock lock = new ReentrantLock();
        private final List<Waiting> waiting = new ArrayList<>();
        private boolean unconfirmed;

        /** True: the caller publishes {@code send} now, alone. False: it waits for the confirm out. */
        boolean admit(Waiting send) {
            lock.lock();
            try {
                if (!unconfirmed) {
                    unconfirmed = true;
                    return true;
                }
                waiting.add(send);
                return false;
            } finally {
                lock.unlock();
            }
        }

        int waiting() {
            lock.lock();
            try {
                return waiting.size();
            } finally {
                lock.unlock();
            }
        }

        void withdraw(Waiting send) {
            lock.lock();
            try {
                waiting.remove(send);
            } finally {
                lock.unlock();
            }
        }

        void publish(List<Waiting> sends) {
            Outgoing message = sends.size() == 1 ? sends.getFirst().outgoing() : grouped(sends);
            CompletableFuture<Void> confirmed;
            try {
                confirmed = publisher.apply(message);
            } catch (RuntimeException e) {
                confirmed = CompletableFuture.failedFuture(new PublishFailedException(PublishFailedException.Reason.connection,
                        "cannot publish to RabbitMQ: " + e.getMessage(), e));
            }
            // Its callers stop waiting at the timeout too; the lane must not wait longer than they do.
            confirmed.orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((ignored, failure) -> {
                for (Waiting send : sends) {
                    if (failure == null) {
                        send.confirmed.complete(null);
                    } else {
                        send.confirmed.completeExceptionally(failure);
                    }
                }
                next();
            });
        }

        /** The message out was settled: the sends that waited leave together, or the lane is idle. */
        private void next() {
            List<Waiting> leaving = new ArrayList<>();
            lock.lock();
            try {
                int targets = 0;
                while (!waiting.isEmpty() && (leaving.isEmpty() || targets + waiting.getFirst().targets() <= batchSize)) {
                    Waiting send = waiting.removeFirst();
                    targets += send.targets();
                    leaving.add(send);
                }
                if (leaving.isEmpty()) {
                    unconfirmed = false;
                    return;
                }
            } finally {
                lock.unlock();
            }
            // Not on the thread that completed the confirm: that is the connection's reader, and a
            // publish may block (flow control) until that very thread reads on.
            Thread.ofVirtual().name("send-queue-coalescer").start(() -> publish(leaving));
        }
    }

    private static Outgoing grouped(List<Waiting> sends) {
        List<Object> batches = new ArrayList<>(sends.size());
        sends.forEach(send -> batches.add(send.outgoing().body()));
        Outgoing first = sends.getFirst().outgoing();
        return new Outgoing(first.exchange(), first.routingKey(), first.messageId(), batches,
                Map.of(Queues.BATCHES_HEADER, sends.size()));
    }
}
