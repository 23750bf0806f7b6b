package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import dev.herald.contract.Queues;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.PublishFailedException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mockito.Mockito;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.json.JsonMapper;

class ConfirmedPublisherTests extends DispatcherIntegrationTest {

    @Autowired
    ConfirmedPublisher publisher;

    @Autowired
    RabbitAdmin admin;

    @Autowired
    CachingConnectionFactory connections;

    @Test
    void anUnroutableMessageIsAFailureNotASuccess() {
        assertThatExceptionOfType(PublishFailedException.class)
                .isThrownBy(() -> publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing(
                        Queues.EXCHANGE, "herald.nowhere", "m1", Map.of("x", 1))), Duration.ofSeconds(5)))
                .satisfies(e -> assertThat(e.reason()).isEqualTo(PublishFailedException.Reason.unroutable));
    }

    @Test
    void aMissingConfirmIsATimeout() throws Exception {
        // A channel that takes the message and never confirms it: a broker that went quiet.
        com.rabbitmq.client.Channel silentChannel = Mockito.mock(com.rabbitmq.client.Channel.class);
        Mockito.when(silentChannel.isOpen()).thenReturn(true);
        com.rabbitmq.client.Connection rawConnection = Mockito.mock(com.rabbitmq.client.Connection.class);
        Mockito.when(rawConnection.createChannel()).thenReturn(silentChannel);
        Connection connection = Mockito.mock(Connection.class);
        Mockito.when(connection.getDelegate()).thenReturn(rawConnection);
        ConnectionFactory silent = Mockito.mock(ConnectionFactory.class);
        Mockito.when(silent.createConnection()).thenReturn(connection);
        ConfirmedPublisher publisher = new ConfirmedPublisher(silent, JsonMapper.builder().build());
        assertThatExceptionOfType(PublishFailedException.class)
                .isThrownBy(() -> publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing(
                        Queues.EXCHANGE, Queues.SEND_NORMAL, "m2", Map.of())), Duration.ofMillis(200)))
                .satisfies(e -> assertThat(e.reason()).isEqualTo(PublishFailedException.Reason.timeout));
    }

    @Test
    void concurrentPublishersEachGetTheirOwnConfirmAndNothingIsLost() throws Exception {
        String queue = "herald.test.confirmed-" + System.nanoTime();
        admin.declareQueue(new Queue(queue, true, false, false, Map.of("x-queue-type", "quorum")));
        int publishers = 32;
        int each = 25;
        List<Thread> threads = new ArrayList<>();
        java.util.Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        for (int p = 0; p < publishers; p++) {
            int publisherNumber = p;
            threads.add(Thread.ofVirtual().start(() -> {
                for (int n = 0; n < each; n++) {
                    try {
                        publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing("", queue, publisherNumber + "-" + n,
                                Map.of("n", n))), Duration.ofSeconds(10));
                    } catch (PublishFailedException e) {
                        failures.add(e);
                    }
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertThat(failures).isEmpty();
        assertThat(admin.getQueueInfo(queue).getMessageCount()).isEqualTo(publishers * each);
        admin.deleteQueue(queue);
    }

    @Test
    void aNackedMessageFailsAndTheNextPublishGoesOutOnAFreshChannel() throws Exception {
        // A queue that refuses every message: RabbitMQ nacks the publish.
        String full = "herald.test.full-" + System.nanoTime();
        admin.declareQueue(new Queue(full, false, false, true, Map.of("x-max-length", 0, "x-overflow", "reject-publish")));
        String open = "herald.test.open-" + System.nanoTime();
        admin.declareQueue(new Queue(open, false, false, true));
        assertThatExceptionOfType(PublishFailedException.class)
                .isThrownBy(() -> publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing("", full, "m3", Map.of())),
                        Duration.ofSeconds(5)))
                .satisfies(e -> assertThat(e.reason()).isEqualTo(PublishFailedException.Reason.nack));
        publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing("", open, "m4", Map.of())), Duration.ofSeconds(5));
        assertThat(admin.getQueueInfo(open).getMessageCount()).isEqualTo(1);
        admin.deleteQueue(full);
        admin.deleteQueue(open);
    }

    @Test
    void afterTheConnectionIsLostTheNextPublishReconnects() throws Exception {
        String queue = "herald.test.reconnect-" + System.nanoTime();
        admin.declareQueue(new Queue(queue, false, false, true));
        publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing("", queue, "m5", Map.of())), Duration.ofSeconds(5));
        connections.resetConnection(); // closes the connection, and with it the publisher's channel
        publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing("", queue, "m6", Map.of())), Duration.ofSeconds(5));
        assertThat(admin.getQueueInfo(queue).getMessageCount()).isEqualTo(2);
        admin.deleteQueue(queue);
    }

    @Test
    void theTopologyIsDeclaredAsQuorumQueuesWithAtLeastOnceDeadLettering() throws Exception {
        // The topology is declared when the first connection opens; run alone, this test may be the
        // first to ask, so declare it now (what a connection would do) instead of depending on order.
        admin.initialize();
        var rabbit = dev.herald.testsupport.LocalRabbit.get();
        for (String queue : List.of(Queues.SEND_HIGH, Queues.SEND_NORMAL, Queues.AUDIENCE)) {
            var json = Api.JSON.readTree(rabbit.managementGet("/api/queues/%2F/" + queue).body());
            assertThat(json.at("/arguments/x-queue-type").asString()).isEqualTo("quorum");
            assertThat(json.at("/arguments/x-dead-letter-exchange").asString()).isEqualTo(Queues.DEAD_LETTER_EXCHANGE);
            assertThat(json.at("/arguments/x-dead-letter-strategy").asString()).isEqualTo("at-least-once");
            assertThat(json.at("/arguments/x-overflow").asString()).isEqualTo("reject-publish");
            assertThat(json.get("durable").asBoolean()).isTrue();
        }
        var dead = Api.JSON.readTree(rabbit.managementGet("/api/queues/%2F/" + Queues.DEAD).body());
        assertThat(dead.at("/arguments/x-queue-type").asString()).isEqualTo("quorum");
        var bindings = Api.JSON.readTree(rabbit.managementGet("/api/exchanges/%2F/" + Queues.DEAD_LETTER_EXCHANGE
                + "/bindings/source").body());
        assertThat(bindings.values()).extracting(b -> b.get("destination").asString()).contains(Queues.DEAD);
        var exchange = Api.JSON.readTree(rabbit.managementGet("/api/exchanges/%2F/" + Queues.DEAD_LETTER_EXCHANGE).body());
        assertThat(exchange.get("type").asString()).isEqualTo("fanout");
    }
}
