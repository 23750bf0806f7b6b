package dev.herald.gateway.consume;

import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.gateway.delivery.BatchDelivery;
import java.util.concurrent.CompletableFuture;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Consumes both send lanes. Each lane has its own consumers, so high-priority pushes never wait
 * behind a bulk backlog for a consumer. Returning a future makes Spring AMQP acknowledge the
 * delivery only when the batch's outcomes are recorded, and requeue it if that fails.
 */
public final class SendListener {
    /** Listener ids; their consumer counts come from {@code herald.gateway.consumers.*} (GatewayConfiguration). */
    public static final String HIGH = "send-high";
    public static final String NORMAL = "send-normal";

    private final BatchDelivery delivery;
    private final PendingWork pending;
    private final JsonMapper json;

    public SendListener(BatchDelivery delivery, PendingWork pending, JsonMapper json) {
        this.delivery = delivery;
        this.pending = pending;
        this.json = json;
    }

    @RabbitListener(id = HIGH, queues = Queues.SEND_HIGH)
    public CompletableFuture<Void> high(Message message) {
        return handle(message);
    }

    @RabbitListener(id = NORMAL, queues = Queues.SEND_NORMAL)
    public CompletableFuture<Void> normal(Message message) {
        return handle(message);
    }

    private CompletableFuture<Void> handle(Message message) {
        PushBatch batch;
        try {
            batch = json.readValue(message.getBody(), PushBatch.class);
        } catch (JacksonException | IllegalArgumentException | NullPointerException unreadable) {
            // Redelivering cannot make it readable: straight to the dead-letter queue.
            throw new AmqpRejectAndDontRequeueException("unreadable push batch: " + unreadable.getMessage(), true, unreadable);
        }
        return pending.track(message, stopped -> delivery.deliver(batch, stopped).toFuture());
    }
}
