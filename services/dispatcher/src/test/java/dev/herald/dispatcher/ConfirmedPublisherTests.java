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
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.json.JsonMapper;

class ConfirmedPublisherTests extends DispatcherIntegrationTest {

    @Autowired
    ConfirmedPublisher publisher;

    @Autowired
    RabbitAdmin admin;

    @Test
    void anUnroutableMessageIsAFailureNotASuccess() {
        assertThatExceptionOfType(PublishFailedException.class)
                .isThrownBy(() -> publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing(
                        Queues.EXCHANGE, "herald.nowhere", "m1", Map.of("x", 1))), Duration.ofSeconds(5)))
                .satisfies(e -> assertThat(e.reason()).isEqualTo(PublishFailedException.Reason.unroutable));
    }

    @Test
    void aMissingConfirmIsATimeout() {
        RabbitTemplate silent = Mockito.mock(RabbitTemplate.class); // sends nothing, so no confirm ever comes
        ConfirmedPublisher publisher = new ConfirmedPublisher(silent, JsonMapper.builder().build());
        assertThatExceptionOfType(PublishFailedException.class)
                .isThrownBy(() -> publisher.publishAll(List.of(new ConfirmedPublisher.Outgoing(
                        Queues.EXCHANGE, Queues.SEND_NORMAL, "m2", Map.of())), Duration.ofMillis(200)))
                .satisfies(e -> assertThat(e.reason()).isEqualTo(PublishFailedException.Reason.timeout));
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
