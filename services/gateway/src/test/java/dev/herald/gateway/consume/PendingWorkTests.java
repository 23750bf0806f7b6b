package dev.herald.gateway.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import dev.herald.testsupport.LocalRabbit;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.listener.ConsumeOkEvent;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;

class PendingWorkTests {
    /** A real RabbitMQ connection: the channels deliveries come on. */
    private static Connection rabbit;
    private static Channel channel;

    private static final String CONSUMER = "consumer-on-an-open-channel";

    private final ListenerConsumers consumers = consumers();
    private static final Duration DRAIN = Duration.ofSeconds(2);
    private final PendingWork pending = new PendingWork(consumers, DRAIN);
    private final ContextClosedEvent closed = new ContextClosedEvent(new GenericApplicationContext());

    @BeforeAll
    static void connect() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(LocalRabbit.get().host());
        factory.setPort(LocalRabbit.get().port());
        rabbit = factory.newConnection("pending-work-tests");
        channel = rabbit.createChannel();
    }

    /** Consumers as the listener containers report them: {@link #CONSUMER} receives on the open channel. */
    private static ListenerConsumers consumers() {
        ListenerConsumers consumers = new ListenerConsumers();
        consumers.onApplicationEvent(new ConsumeOkEvent(new DefaultConsumer(channel), "herald.send.normal", CONSUMER));
        return consumers;
    }

    @AfterAll
    static void disconnect() throws Exception {
        rabbit.close();
    }

    @Test
    void workWhoseChannelClosesIsStoppedAndADeliveryFromAClosedChannelIsNotStarted() throws Exception {
        Channel lost = rabbit.createChannel();
        consumers.onApplicationEvent(new ConsumeOkEvent(new DefaultConsumer(lost), "herald.send.normal", "consumer-on-a-lost-channel"));
        CompletableFuture<Void> running = new CompletableFuture<>();
        AtomicReference<BooleanSupplier> stopMark = new AtomicReference<>();
        CompletableFuture<Void> tracked = pending.track(delivery(0, "consumer-on-a-lost-channel"), stopped -> {
            stopMark.set(stopped);
            return running;
        });
        CompletableFuture<Void> onOtherChannel = new CompletableFuture<>();
        pending.track(delivery(0), stopped -> onOtherChannel);

        lost.close(); // as a node's death closes it: RabbitMQ requeues the delivery for another consumer
        await().atMost(Duration.ofSeconds(5)).until(() -> stopMark.get().getAsBoolean());
        assertThat(running).as("stopped work finishes what it sent, within the drain timeout").isNotDone();
        assertThat(running).as("work still running after the drain timeout (%s)", DRAIN)
                .failsWithin(DRAIN.plusSeconds(5)).withThrowableOfType(CancellationException.class);
        assertThat(tracked).failsWithin(Duration.ofSeconds(5)).withThrowableOfType(ExecutionException.class);
        assertThat(onOtherChannel).as("work from a channel still open").isNotDone();

        AtomicBoolean started = new AtomicBoolean();
        assertThatIllegalStateException().isThrownBy(() -> pending.track(delivery(0, "consumer-on-a-lost-channel"), stopped -> {
            started.set(true);
            return CompletableFuture.completedFuture(null);
        }));
        assertThat(started).as("work of a delivery whose channel is closed").isFalse();
        onOtherChannel.complete(null);
        assertThat(pending.size()).isZero();
    }

    @Test
    void theDrainEndsOnlyWhenTheWorkInHandAndWorkArrivingMeanwhileIsDone() throws Exception {
        CompletableFuture<Void> first = new CompletableFuture<>();
        pending.track(delivery(0), stopped -> first);
        CompletableFuture<Void> drain = CompletableFuture.runAsync(() -> pending.onApplicationEvent(closed));

        CompletableFuture<Void> arrivedDuringDrain = new CompletableFuture<>();
        pending.track(delivery(0), stopped -> arrivedDuringDrain);
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
        CompletableFuture<Void> tracked = pending.track(delivery(0), stopped -> work);
        long failedAt = System.nanoTime();
        work.completeExceptionally(new IllegalStateException("Redis full"));
        assertThat(tracked).as("handed back at once").isNotDone();
        assertThat(tracked).failsWithin(Duration.ofSeconds(5))
                .withThrowableOfType(ExecutionException.class).withMessageContaining("Redis full");
        assertThat(Duration.ofNanos(System.nanoTime() - failedAt)).isGreaterThanOrEqualTo(Duration.ofMillis(900));
        assertThat(pending.size()).isZero();
    }

    /** A delivery to {@link #CONSUMER} as RabbitMQ hands it over after {@code redeliveries} earlier deliveries. */
    private static Message delivery(long redeliveries) {
        return delivery(redeliveries, CONSUMER);
    }

    private static Message delivery(long redeliveries, String consumerTag) {
        MessageProperties properties = new MessageProperties();
        properties.setConsumerTag(consumerTag);
        if (redeliveries > 0) {
            properties.setHeader("x-delivery-count", redeliveries);
        }
        return new Message(new byte[0], properties);
    }

    @Test
    void aDeliveryArrivingAfterTheDrainIsNotStarted() {
        pending.onApplicationEvent(closed);

        AtomicBoolean started = new AtomicBoolean();
        assertThatIllegalStateException().isThrownBy(() -> pending.track(delivery(0), stopped -> {
            started.set(true);
            return CompletableFuture.completedFuture(null);
        }));
        assertThat(started).isFalse();
    }

    @Test
    void theDrainGivesUpAfterItsTimeoutAndRefusesFurtherWork() {
        PendingWork shortDrain = new PendingWork(consumers, Duration.ofMillis(50));
        shortDrain.track(delivery(0), stopped -> new CompletableFuture<>()); // never completes

        shortDrain.onApplicationEvent(closed);

        assertThat(shortDrain.size()).isOne();
        assertThatIllegalStateException().isThrownBy(() -> shortDrain.track(delivery(0), stopped -> CompletableFuture.completedFuture(null)));
    }
}
