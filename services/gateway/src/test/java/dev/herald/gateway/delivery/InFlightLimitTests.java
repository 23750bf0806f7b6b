package dev.herald.gateway.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.herald.contract.Priority;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

class InFlightLimitTests {

    @Test
    void neverRunsMoreThanThePermitsAtOnce() {
        InFlightLimit limit = new InFlightLimit(3);
        AtomicInteger peak = new AtomicInteger();
        List<String> results = new CopyOnWriteArrayList<>();
        List<Sinks.One<String>> gates = runGated(limit, 10, peak, results);
        assertThat(limit.inFlight()).isEqualTo(3);
        assertThat(limit.waiting()).isEqualTo(7);
        for (int i = 0; i < 10; i++) {
            gates.get(i).tryEmitValue("r" + i);
        }
        assertThat(results).hasSize(10);
        assertThat(peak.get()).isEqualTo(3);
        assertThat(limit.inFlight()).isZero();
    }

    @Test
    void highPriorityWaitersGoFirst() {
        InFlightLimit limit = new InFlightLimit(1);
        Sinks.One<String> blocker = Sinks.one();
        List<String> order = new CopyOnWriteArrayList<>();
        limit.run(Priority.normal, blocker.asMono()).subscribe();
        limit.run(Priority.normal, Mono.fromCallable(() -> "normal")).subscribe(order::add);
        limit.run(Priority.high, Mono.fromCallable(() -> "high")).subscribe(order::add);
        blocker.tryEmitValue("done");
        assertThat(order).containsExactly("high", "normal");
    }

    /**
     * Stopped work ends the moment it is handed its permit, so each release hands the next permit
     * straight away: tens of thousands of such waiters are served in a loop, not one stack frame deeper
     * each (the gateway overflowed its stack when a RabbitMQ restart stopped whole batches).
     */
    @Test
    void waitersWhoseWorkEndsAtOnceAreServedWithoutRecursing() {
        InFlightLimit limit = new InFlightLimit(1);
        Sinks.One<String> blocker = Sinks.one();
        limit.run(Priority.normal, blocker.asMono()).subscribe();
        AtomicInteger ended = new AtomicInteger();
        int waiters = 50_000;
        for (int i = 0; i < waiters; i++) {
            limit.run(Priority.normal, Mono.<String>empty()).doOnTerminate(ended::incrementAndGet).subscribe();
        }
        assertThat(limit.waiting()).isEqualTo(waiters);
        blocker.tryEmitValue("released");
        assertThat(ended.get()).isEqualTo(waiters);
        assertThat(limit.inFlight()).isZero();
        assertThat(limit.waiting()).isZero();
    }

    @Test
    void releasesThePermitWhenWorkFails() {
        InFlightLimit limit = new InFlightLimit(1);
        limit.run(Priority.normal, Mono.error(new IllegalStateException("boom"))).onErrorResume(e -> Mono.empty()).block();
        assertThat(limit.inFlight()).isZero();
        assertThat(limit.run(Priority.normal, Mono.just("ok")).block()).isEqualTo("ok");
    }

    /**
     * Waiters cancelled while queued, cancelled in the same instant their permit is handed over,
     * and runs cancelled while working: afterwards no permit is held, nobody waits, and the full
     * capacity runs at once again.
     */
    @Test
    void cancelledRunsGiveTheirPermitsBack() {
        InFlightLimit limit = new InFlightLimit(2);
        Sinks.One<String> first = Sinks.one();
        Sinks.One<String> second = Sinks.one();
        limit.run(Priority.normal, first.asMono()).subscribe();
        Disposable working = limit.run(Priority.normal, second.asMono()).subscribe();
        List<Disposable> queued = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            queued.add(limit.run(i % 2 == 0 ? Priority.high : Priority.normal, Mono.just("never")).subscribe());
        }
        assertThat(limit.waiting()).isEqualTo(50);
        queued.forEach(Disposable::dispose);
        assertThat(limit.waiting()).as("cancelled waiters leave the queue").isZero();
        assertThat(limit.inFlight()).isEqualTo(2);

        working.dispose();
        assertThat(limit.inFlight()).as("a run cancelled while working gives its permit back").isEqualTo(1);
        first.tryEmitValue("done");
        assertThat(limit.inFlight()).isZero();

        AtomicInteger peak = new AtomicInteger();
        List<Sinks.One<String>> gates = runGated(limit, 4, peak, new CopyOnWriteArrayList<>());
        assertThat(limit.inFlight()).as("full capacity after the cancellations").isEqualTo(2);
        assertThat(limit.waiting()).isEqualTo(2);
        gates.forEach(gate -> gate.tryEmitValue("ok"));
        assertThat(peak.get()).isEqualTo(2);
        assertThat(limit.inFlight()).isZero();
        assertThat(limit.waiting()).isZero();
    }

    /** Cancellations racing the releases that hand permits to waiters, from several threads. */
    @Test
    void cancellationsRacingReleasesLoseNoPermit() throws InterruptedException {
        InFlightLimit limit = new InFlightLimit(4);
        int threads = 4;
        int runsPerThread = 5_000;
        AtomicInteger completed = new AtomicInteger();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < runsPerThread; i++) {
                    Sinks.One<String> gate = Sinks.one();
                    Disposable run = limit.run(Priority.normal, gate.asMono()).subscribe(r -> completed.incrementAndGet());
                    if (i % 2 == 0) {
                        run.dispose();
                    } else {
                        gate.tryEmitValue("ok");
                        run.dispose();
                    }
                }
            });
        }
        for (Thread worker : workers) {
            worker.join();
        }
        assertThat(limit.inFlight()).as("permits held after every run ended").isZero();
        assertThat(limit.waiting()).isZero();
        assertThat(limit.run(Priority.normal, Mono.just("ok")).block()).isEqualTo("ok");
    }

    /** Starts {@code runs} runs, each holding its permit until its gate opens; {@code peak} tracks the most in flight. */
    private static List<Sinks.One<String>> runGated(InFlightLimit limit, int runs, AtomicInteger peak, List<String> results) {
        List<Sinks.One<String>> gates = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            Sinks.One<String> gate = Sinks.one();
            gates.add(gate);
            limit.run(Priority.normal, Mono.defer(() -> {
                peak.accumulateAndGet(limit.inFlight(), Math::max);
                return gate.asMono();
            })).subscribe(results::add);
        }
        return gates;
    }

    @Test
    void refusesANonPositiveLimit() {
        assertThatThrownBy(() -> new InFlightLimit(0)).hasMessageContaining("max-in-flight");
    }
}
