package dev.herald.sandbox.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.herald.sandbox.SandboxProperties;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.Test;

class FaultInjectorTests {
    private final FaultInjector injector = new FaultInjector(new SandboxProperties(0, null, null, List.of("localhost"), null,
            Duration.ofHours(1), new Faults(0, 0, 0, 1, 0, List.of())));

    @Test
    void plainTokensAreAcceptedWhenNoRatesAreSet() {
        assertThat(injector.decide("abc", 1).fault()).isEqualTo(Fault.NONE);
    }

    @Test
    void prefixesDecideRegardlessOfAttempt() {
        assertThat(injector.decide("unregistered-x", 5).fault()).isEqualTo(Fault.UNREGISTERED);
        assertThat(injector.decide("bad-x", 5).fault()).isEqualTo(Fault.BAD_TOKEN);
    }

    @Test
    void countedPrefixesFailExactlyTheFirstNAttempts() {
        assertThat(injector.decide("throttled3-x", 3)).isEqualTo(new Decision(Fault.TOO_MANY_REQUESTS, 1));
        assertThat(injector.decide("throttled3-x", 4).fault()).isEqualTo(Fault.NONE);
        assertThat(injector.decide("flaky12-x", 12).fault()).isEqualTo(Fault.UNAVAILABLE);
        assertThat(injector.decide("flaky12-x", 13).fault()).isEqualTo(Fault.NONE);
    }

    @Test
    void tokensThatOnlyLookLikePrefixesAreNormal() {
        assertThat(injector.decide("throttled-x", 1).fault()).isEqualTo(Fault.NONE);
        assertThat(injector.decide("flakyx-1", 1).fault()).isEqualTo(Fault.NONE);
        assertThat(injector.decide("throttled5", 1).fault()).isEqualTo(Fault.NONE);
    }

    @Test
    void rateOfOneAlwaysApplies() {
        injector.update(new FaultsUpdate(null, null, null, null, 1.0));

        assertThat(injector.decide("abc", 1).fault()).isEqualTo(Fault.UNAVAILABLE);
    }

    @Test
    void aStormThrottlesEveryRequestOfItsProjectOrTopicOnly() {
        injector.update(new FaultsUpdate(null, null, null, 3L, null, java.util.List.of("storm-project")));

        assertThat(injector.decide("storm-project", "abc", 1)).isEqualTo(new Decision(Fault.TOO_MANY_REQUESTS, 3));
        assertThat(injector.decide("storm-project", "unregistered-x", 1)).isEqualTo(new Decision(Fault.TOO_MANY_REQUESTS, 3));
        assertThat(injector.decide("calm-project", "abc", 1).fault()).isEqualTo(Fault.NONE);

        injector.update(new FaultsUpdate(null, null, null, null, null, java.util.List.of()));
        assertThat(injector.decide("storm-project", "abc", 1).fault()).isEqualTo(Fault.NONE);
    }

    @Test
    void invalidUpdatesAreRefusedAndLeaveTheSettingsUnchanged() {
        assertThatThrownBy(() -> injector.update(new FaultsUpdate(null, Double.NaN, null, null, null)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> injector.update(new FaultsUpdate(null, 0.5, 0.6, null, null)))
                .hasMessageContaining("must not exceed 1");

        assertThat(injector.faults()).isEqualTo(new Faults(0, 0, 0, 1, 0, java.util.List.of()));
    }

    @Test
    void latencyIsWaitedOutOnTheGivenTimer() {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try {
            injector.update(new FaultsUpdate(120L, null, null, null, null));
            long start = System.nanoTime();

            assertThat(injector.delay("x", timer).block(Duration.ofSeconds(5))).isEqualTo("x");
            assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(Duration.ofMillis(120).toNanos());
        } finally {
            timer.shutdownNow();
        }
    }
}
