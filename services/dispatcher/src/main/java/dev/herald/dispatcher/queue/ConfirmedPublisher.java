package dev.herald.dispatcher.queue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageBuilder;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * Publishes persistent JSON messages and returns only when RabbitMQ has confirmed every one of them
 * (publisher confirms) and routed it to a queue (mandatory + returns): a message the broker nacks,
 * cannot route, or does not confirm in time is a failure, never a success.
 */
public final class ConfirmedPublisher {
    /** One message to publish: where to and what (a contract record, sent as JSON). */
    public record Outgoing(String exchange, String routingKey, String messageId, Object body) {
    }

    private final RabbitTemplate rabbit;
    private final JsonMapper json;

    public ConfirmedPublisher(RabbitTemplate rabbit, JsonMapper json) {
        this.rabbit = rabbit;
        this.json = json;
    }

    /**
     * Sends all messages, then waits for all confirms within {@code timeout}.
     *
     * @throws PublishFailedException if any message was not confirmed and routed
     */
    public void publishAll(List<Outgoing> messages, Duration timeout) throws PublishFailedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<CorrelationData> pending = new ArrayList<>(messages.size());
        for (Outgoing outgoing : messages) {
            Message message = MessageBuilder.withBody(json.writeValueAsBytes(outgoing.body()))
                    .setContentType(MessageProperties.CONTENT_TYPE_JSON)
                    .setContentEncoding("UTF-8")
                    .setDeliveryMode(MessageDeliveryMode.PERSISTENT)
                    .setMessageId(outgoing.messageId())
                    .build();
            CorrelationData correlation = new CorrelationData(outgoing.messageId() + "/" + pending.size());
            try {
                rabbit.send(outgoing.exchange(), outgoing.routingKey(), message, correlation);
            } catch (AmqpException e) {
                throw new PublishFailedException(PublishFailedException.Reason.connection,
                        "cannot publish to RabbitMQ: " + e.getMessage(), e);
            }
            pending.add(correlation);
        }
        for (CorrelationData correlation : pending) {
            CorrelationData.Confirm confirm;
            try {
                confirm = correlation.getFuture().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new PublishFailedException(PublishFailedException.Reason.timeout,
                        "RabbitMQ did not confirm within " + timeout, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new PublishFailedException(PublishFailedException.Reason.interrupted, "interrupted", e);
            } catch (ExecutionException e) {
                throw new PublishFailedException(PublishFailedException.Reason.connection,
                        "publish failed: " + e.getCause(), e.getCause());
            }
            if (!confirm.ack()) {
                throw new PublishFailedException(PublishFailedException.Reason.nack,
                        "RabbitMQ refused the message: " + confirm.reason(), null);
            }
            if (correlation.getReturned() != null) {
                throw new PublishFailedException(PublishFailedException.Reason.unroutable,
                        "RabbitMQ could not route the message: " + correlation.getReturned().getReplyText(), null);
            }
        }
    }
}
