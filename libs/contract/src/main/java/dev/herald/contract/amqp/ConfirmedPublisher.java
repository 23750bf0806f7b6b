package dev.herald.contract.amqp;

import com.rabbitmq.client.Channel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.connection.RabbitUtils;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * Publishes persistent JSON messages and reports success only when RabbitMQ has confirmed them
 * (publisher confirms) and routed them to a queue (mandatory + returns): a message the broker
 * nacks, cannot route, or does not confirm in time is a failure, never a success. The Dispatcher
 * waits for it before answering 202; the gateway before acknowledging the work that produced it.
 * The template must have publisher confirms (correlated), returns and mandatory enabled.
 *
 * <p>A channel on which a message was nacked is closed rather than used again. RabbitMQ 3.10 (the
 * version Debian ships, which the tests and the real-node chart run) keeps, per channel and quorum
 * queue, the leader it found when the channel first published there; a channel that first published
 * in the moment after a node died, before the queue record named the new leader, asks the dead node
 * for every publish and nacks all of them for as long as it lives (fixed in later 3.11 and 3.12
 * releases: rabbitmq-server pull request 9221). A fresh channel starts from the current leader; a nack for any other reason
 * (a full queue with {@code reject-publish}) costs no more than opening one.
 */
public final class ConfirmedPublisher {
    /** One message to publish: where to and what (a contract record, sent as JSON), with headers. */
    public record Outgoing(String exchange, String routingKey, String messageId, Object body, Map<String, Object> headers) {
        public Outgoing {
            headers = Map.copyOf(headers);
        }

        public Outgoing(String exchange, String routingKey, String messageId, Object body) {
            this(exchange, routingKey, messageId, body, Map.of());
        }
    }

    private final RabbitTemplate rabbit;
    private final JsonMapper json;

    public ConfirmedPublisher(RabbitTemplate rabbit, JsonMapper json) {
        this.rabbit = rabbit;
        this.json = json;
    }

    /**
     * Sends one message (this call may block while RabbitMQ applies flow control) and returns a
     * future that completes when it is confirmed and routed, or fails with a
     * {@link PublishFailedException}.
     */
    public CompletableFuture<Void> publish(Outgoing outgoing) {
        MessageProperties properties = new MessageProperties();
        properties.setContentType(MessageProperties.CONTENT_TYPE_JSON);
        properties.setContentEncoding("UTF-8");
        properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        properties.setMessageId(outgoing.messageId());
        outgoing.headers().forEach(properties::setHeader);
        Message message = new Message(json.writeValueAsBytes(outgoing.body()), properties);
        CorrelationData correlation = new CorrelationData(outgoing.messageId() + "/" + System.nanoTime());
        Channel used;
        try {
            used = rabbit.invoke(operations -> {
                operations.send(outgoing.exchange(), outgoing.routingKey(), message, correlation);
                return operations.execute(channel -> channel);
            });
        } catch (AmqpException e) {
            return CompletableFuture.failedFuture(new PublishFailedException(PublishFailedException.Reason.connection,
                    "cannot publish to RabbitMQ: " + e.getMessage(), e));
        }
        return correlation.getFuture().handle((confirm, error) -> {
            if (error != null) {
                throw new CompletionException(new PublishFailedException(PublishFailedException.Reason.connection,
                        "publish failed: " + error, error));
            }
            if (!confirm.ack()) {
                retire(used);
                throw new CompletionException(new PublishFailedException(PublishFailedException.Reason.nack,
                        "RabbitMQ refused the message: " + confirm.reason(), null));
            }
            if (correlation.getReturned() != null) {
                throw new CompletionException(new PublishFailedException(PublishFailedException.Reason.unroutable,
                        "RabbitMQ could not route the message: " + correlation.getReturned().getReplyText(), null));
            }
            return null;
        });
    }

    /**
     * Closes the channel a nack came on; the channel cache drops a closed channel. Not on this
     * thread: confirms arrive on the connection's own thread, which must stay free to read the close-ok.
     */
    private static void retire(Channel used) {
        Channel target = used instanceof ChannelProxy proxy ? proxy.getTargetChannel() : used;
        if (target != null) {
            Thread.ofVirtual().name("retire-nacked-channel").start(() -> RabbitUtils.closeChannel(target));
        }
    }

    /**
     * Sends all messages, then waits for all confirms within {@code timeout}.
     *
     * @throws PublishFailedException if any message was not confirmed and routed
     */
    public void publishAll(List<Outgoing> messages, Duration timeout) throws PublishFailedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<CompletableFuture<Void>> pending = new ArrayList<>(messages.size());
        for (Outgoing outgoing : messages) {
            pending.add(publish(outgoing));
        }
        for (CompletableFuture<Void> confirmed : pending) {
            try {
                confirmed.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new PublishFailedException(PublishFailedException.Reason.timeout,
                        "RabbitMQ did not confirm within " + timeout, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new PublishFailedException(PublishFailedException.Reason.interrupted, "interrupted", e);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof PublishFailedException failed) {
                    throw failed;
                }
                throw new PublishFailedException(PublishFailedException.Reason.connection, "publish failed: " + e.getCause(), e.getCause());
            }
        }
    }
}
