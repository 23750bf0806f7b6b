package dev.herald.gateway.delivery;

import dev.herald.contract.Priority;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * Bounds the provider requests in flight on this replica, without parking threads: a caller that
 * finds no permit waits in a queue and is resumed when one is released. High-priority waiters are
 * served before normal ones, so a campaign backlog does not delay a transactional push here either.
 *
 * <p>Each run holds at most one permit, and gives it back exactly once however it ends: completed,
 * failed, or cancelled while waiting, while being handed its permit, or while working. A waiter
 * cancelled in the queue leaves it, so it neither takes a permit later nor counts as waiting.
 */
public final class InFlightLimit {
    private final int permits;
    private final AtomicInteger inUse = new AtomicInteger();
    private final Queue<Waiter> highWaiters = new ConcurrentLinkedQueue<>();
    private final Queue<Waiter> normalWaiters = new ConcurrentLinkedQueue<>();
    /** Calls to drain() not yet served: non-zero while one caller is draining. */
    private final AtomicInteger draining = new AtomicInteger();

    public InFlightLimit(int permits) {
        if (permits < 1) {
            throw new IllegalArgumentException("herald.gateway.max-in-flight must be at least 1, got " + permits);
        }
        this.permits = permits;
    }

    /** Runs {@code work} once a permit is free and releases it when the work ends, however it ends. */
    public <T> Mono<T> run(Priority priority, Mono<T> work) {
        return Mono.defer(() -> {
            Queue<Waiter> lane = priority == Priority.high ? highWaiters : normalWaiters;
            Waiter waiter = new Waiter();
            return Mono.<Boolean>create(sink -> {
                        waiter.sink = sink;
                        if (tryAcquire()) {
                            waiter.grant();
                            sink.success(true);
                        } else {
                            lane.add(waiter);
                            // A permit may have been released between the failed try and the enqueue.
                            drain();
                        }
                    })
                    // Released as soon as the work ends (before what follows downstream); the outer
                    // hook covers a run cancelled before its work started.
                    .flatMap(acquired -> work.doFinally(signal -> waiter.end()))
                    .doFinally(signal -> {
                        if (waiter.end() == State.WAITING) {
                            lane.remove(waiter);
                        }
                    });
        });
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

    /**
     * Hands free permits to waiters, high lane first; a permit taken for a waiter that has ended goes
     * back. One caller drains at a time and the others leave it a note to go round again: a waiter's
     * work may end at once when handed its permit (stopped work, a held target) and release it, and a
     * release that drained in place would recurse once per waiter (a StackOverflowError with the
     * thousands of targets a stopped batch leaves waiting).
     */
    private void drain() {
        if (draining.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            while (!highWaiters.isEmpty() || !normalWaiters.isEmpty()) {
                if (!tryAcquire()) {
                    break;
                }
                Waiter next = highWaiters.poll();
                if (next == null) {
                    next = normalWaiters.poll();
                }
                if (next == null || !next.grant()) {
                    inUse.decrementAndGet();
                    continue;
                }
                next.sink.success(true);
            }
            missed = draining.addAndGet(-missed);
        } while (missed != 0);
    }

    private enum State { WAITING, HOLDING, ENDED }

    /** One run's claim on a permit: waiting for it, holding it, or ended (the permit given back if it held one). */
    private final class Waiter {
        private final AtomicReference<State> state = new AtomicReference<>(State.WAITING);
        private volatile MonoSink<Boolean> sink;

        /** False if the run ended first: the caller still owns the permit it took for this waiter. */
        boolean grant() {
            return state.compareAndSet(State.WAITING, State.HOLDING);
        }

        /** Ends the run once; gives its permit back if it held one. Returns the state it ended in. */
        State end() {
            State previous = state.getAndSet(State.ENDED);
            if (previous == State.HOLDING) {
                release();
            }
            return previous;
        }
    }
}
