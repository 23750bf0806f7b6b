package dev.herald.gateway.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;

class PendingWorkTests {
    private final PendingWork pending = new PendingWork(new ListenerConsumers(), Duration.ofSeconds(10));
    private final ContextClosedEvent closed = new ContextClosedEvent(new GenericApplicationContext());

    @Test
    void theDrainEndsOnlyWhenTheWorkInHandAndWorkArrivingMeanwhileIsDone() throws Exception {
        CompletableFuture<Void> first = new CompletableFuture<>();
        pending.track(() -> first);
        CompletableFuture<Void> drain = CompletableFuture.runAsync(() -> pending.onApplicationEvent(closed));

        CompletableFuture<Void> arrivedDuringDrain = new CompletableFuture<>();
        pending.track(() -> arrivedDuringDrain);
        first.complete(null);
        assertThat(drain).as("drain while a delivery is still in hand").isNotDone();

        arrivedDuringDrain.completeExceptionally(new IllegalStateException("provider down"));
        drain.get(5, TimeUnit.SECONDS);
        assertThat(pending.size()).isZero();
    }

    @Test
    void aDeliveryArrivingAfterTheDrainIsNotStarted() {
        pending.onApplicationEvent(closed);

        AtomicBoolean started = new AtomicBoolean();
        assertThatIllegalStateException().isThrownBy(() -> pending.track(() -> {
            started.set(true);
            return CompletableFuture.completedFuture(null);
        }));
        assertThat(started).isFalse();
    }

    @Test
    void theDrainGivesUpAfterItsTimeoutAndRefusesFurtherWork() {
        PendingWork shortDrain = new PendingWork(new ListenerConsumers(), Duration.ofMillis(50));
        shortDrain.track(CompletableFuture::new); // never completes

        shortDrain.onApplicationEvent(closed);

        assertThat(shortDrain.size()).isOne();
        assertThatIllegalStateException().isThrownBy(() -> shortDrain.track(() -> CompletableFuture.completedFuture(null)));
    }
}
