package dev.herald.gateway.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.herald.contract.Priority;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

class InFlightLimitTests {

    @Test
    void neverRunsMoreThanThePermitsAtOnce() {
        InFlightLimit limit = new InFlightLimit(3);
        AtomicInteger peak = new AtomicInteger();
        List<Sinks.One<String>> gates = new ArrayList<>();
        List<String> results = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 10; i++) {
            Sinks.One<String> gate = Sinks.one();
            gates.add(gate);
            limit.run(Priority.normal, Mono.defer(() -> {
                peak.accumulateAndGet(limit.inFlight(), Math::max);
                return gate.asMono();
            })).subscribe(results::add);
        }
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

    @Test
    void releasesThePermitWhenWorkFails() {
        InFlightLimit limit = new InFlightLimit(1);
        limit.run(Priority.normal, Mono.error(new IllegalStateException("boom"))).onErrorResume(e -> Mono.empty()).block();
        assertThat(limit.inFlight()).isZero();
        assertThat(limit.run(Priority.normal, Mono.just("ok")).block()).isEqualTo("ok");
    }

    @Test
    void refusesANonPositiveLimit() {
        assertThatThrownBy(() -> new InFlightLimit(0)).hasMessageContaining("max-in-flight");
    }
}
