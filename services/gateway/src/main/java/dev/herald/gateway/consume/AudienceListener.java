package dev.herald.gateway.consume;

import dev.herald.contract.AudienceJob;
import dev.herald.contract.Queues;
import dev.herald.gateway.audience.AudienceExpander;
import java.util.concurrent.CompletableFuture;
import org.springframework.amqp.AmqpRejectAndDontRequeueException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/** Consumes topic and device-list sends and expands their audience into send batches. */
public final class AudienceListener {
    /** Listener id; its consumer count comes from {@code herald.gateway.consumers.audience} (GatewayConfiguration). */
    public static final String ID = "audience";

    private final AudienceExpander expander;
    private final PendingWork pending;
    private final JsonMapper json;

    public AudienceListener(AudienceExpander expander, PendingWork pending, JsonMapper json) {
        this.expander = expander;
        this.pending = pending;
        this.json = json;
    }

    @RabbitListener(id = ID, queues = Queues.AUDIENCE)
    public CompletableFuture<Void> expand(Message message) {
        AudienceJob job;
        try {
            job = json.readValue(message.getBody(), AudienceJob.class);
        } catch (JacksonException | IllegalArgumentException | NullPointerException unreadable) {
            throw new AmqpRejectAndDontRequeueException("unreadable audience job: " + unreadable.getMessage(), true, unreadable);
        }
        return pending.track(message, stopped -> expander.expand(job, stopped).toFuture());
    }
}
