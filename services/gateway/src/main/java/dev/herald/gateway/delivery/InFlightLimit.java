package dev.herald.gateway.delivery;

import dev.herald.contract.Priority;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;

/**
 * Bounds the provider requests in flight on this replica, without parking threads: a caller that
 * finds no permit waits in a queue and is resumed when one is released. High-priority waiters are
 * served before normal ones, so a campaign backlog does not delay a transactional push here either.
 */
public final class InFlightLimit {
    private final int permits;
    private final AtomicInteger inUse = new AtomicInteger();
    private final Queue<Runnable> highWaiters = new ConcurrentLinkedQueue<>();
    private final Queue<Runnable> normalWaiters = new ConcurrentLinkedQueue<>();

    public InFlightLimit(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("herald.gateway.max-in-flight must be at least 1, got " + permits);
        }
        this.permits = permits;
    }

    /** Runs {@code work} once a permit is free and releases it when the work ends, however it ends. */
    public <T> Mono<T> run(Priority priority, Mono<T> work) {
        return Mono.<Boolean>create(sink -> {
                    if (tryAcquire()) {
                        sink.success(true);
                    } else {
                        (priority == Priority.high ? highWaiters : normalWaiters).add(() -> sink.success(true));
                        // A permit may have been released between the failed try and the enqueue.
                        drain();
                    }
                })
                .flatMap(acquired -> work.doFinally(signal -> release()));
    }

    public int inFlight() {
        return inUse.get();
    }

    public int waiting() {
        return highWaiters.size() + normalWaiters.size();
    }

    private boolean tryAcquire() {
        while (true) {
            int current = inUse.get();
            if (current >= permits) {
                return false;
            }
            if (inUse.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    private void release() {
        inUse.decrementAndGet();
        drain();
    }

    /** Hands free permits to waiters, high lane first. */
    private void drain() {
        while (!highWaiters.isEmpty() || !normalWaiters.isEmpty()) {
            if (!tryAcquire()) {
                return;
            }
            Runnable next = highWaiters.poll();
            if (next == null) {
                next = normalWaiters.poll();
            }
            if (next == null) {
                inUse.decrementAndGet();
                continue;
            }
            next.run();
        }
    }
}
