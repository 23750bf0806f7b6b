package dev.herald.gateway.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;

class PendingWorkTests {
    private final PendingWork pending = new PendingWork(new ListenerConsumers(), Duration.ofSeconds(10));
    private final ContextClosedEvent closed = new ContextClosedEvent(new GenericApplicationContext());

    @Test
    void theDrainEndsOnlyWhenTheWorkInHandAndWorkArrivingMeanwhileIsDone() throws Exception {
        CompletableFuture<Void> first = new CompletableFuture<>();
        pending.track(delivery(0), () -> first);
        CompletableFuture<Void> drain = CompletableFuture.runAsync(() -> pending.onApplicationEvent(closed));

        CompletableFuture<Void> arrivedDuringDrain = new CompletableFuture<>();
        pending.track(delivery(0), () -> arrivedDuringDrain);
        first.complete(null);
        assertThat(drain).as("drain while a delivery is still in hand").isNotDone();

        arrivedDuringDrain.completeExceptionally(new IllegalStateException("provider down"));
        drain.get(5, TimeUnit.SECONDS);
        assertThat(pending.size()).isZero();
    }

    @Test
    void failedWorkGoesBackToItsQueueOnlyAfterAPauseThatGrowsWithItsRedeliveries() throws Exception {
        assertThat(PendingWork.requeueDelay(delivery(0))).isEqualTo(Duration.ofSeconds(1));
        assertThat(PendingWork.requeueDelay(delivery(3))).isEqualTo(Duration.ofSeconds(8));
        assertThat(PendingWork.requeueDelay(delivery(19))).isEqualTo(Duration.ofSeconds(15));

        CompletableFuture<Void> work = new CompletableFuture<>();
        CompletableFuture<Void> tracked = pending.track(delivery(0), () -> work);
        long failedAt = System.nanoTime();
        work.completeExceptionally(new IllegalStateException("Redis full"));
        assertThat(tracked).as("handed back at once").isNotDone();
        assertThat(tracked).failsWithin(Duration.ofSeconds(5))
                .withThrowableOfType(ExecutionException.class).withMessageContaining("Redis full");
        assertThat(Duration.ofNanos(System.nanoTime() - failedAt)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
        assertThat(pending.size()).isZero();
    }

    /** A delivery as RabbitMQ hands it over after {@code redeliveries} earlier deliveries. */
    private static Message delivery(long redeliveries) {
        MessageProperties properties = new MessageProperties();
        if (redeliveries > 0) {
            properties.setHeader("x-delivery-count", redeliveries);
        }
        return new Message(new byte[0], properties);
    }

    @Test
    void aDeliveryArrivingAfterTheDrainIsNotStarted() {
        pending.onApplicationEvent(closed);

        AtomicBoolean started = new AtomicBoolean();
        assertThatIllegalStateException().isThrownBy(() -> pending.track(delivery(0), () -> {
            started.set(true);
            return CompletableFuture.completedFuture(null);
        }));
        assertThat(started).isFalse();
    }

    @Test
    void theDrainGivesUpAfterItsTimeoutAndRefusesFurtherWork() {
        PendingWork shortDrain = new PendingWork(new ListenerConsumers(), Duration.ofMillis(50));
        shortDrain.track(delivery(0), CompletableFuture::new); // never completes

        shortDrain.onApplicationEvent(closed);

        assertThat(shortDrain.size()).isOne();
        assertThatIllegalStateException().isThrownBy(() -> shortDrain.track(delivery(0), () -> CompletableFuture.completedFuture(null)));
    }
}
