package dev.herald.store.mqtt;

import dev.herald.contract.MqttDelivery;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.PublishFailedException;
import dev.herald.contract.payload.MqttPayloads;
import dev.herald.store.status.Outcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Hands one MQTT target of a message to its device: puts the message into the device's box
 * ({@link MqttOutbox}) and, when a connection-manager node holds the device live, gives that node a
 * copy on its own queue, confirmed by RabbitMQ. The one way to do it, for the gateway (every MQTT
 * target it consumes) and the dispatcher (a single-device send it hands over itself, see
 * services/connection-manager/README.md, "Who hands a message over"). Putting the same message again is a no-op in the box, and a
 * node drops a copy it already has for the session, so a second hand-off of one message (a
 * redelivered batch, the dispatcher's fallback to the queue) delivers it once.
 */
public final class MqttHandoff {
    /** Where a handed-off message waits for its device. */
    public enum Placement {
        /** A live node confirmed its copy: the device gets it now. */
        LIVE,
        /** Only the box holds it: the device is offline, or its node's queue is gone (a node that stopped). */
        BOXED
    }

    private final MqttOutbox outbox;
    private final ConfirmedPublisher publisher;
    private final JsonMapper json;

    public MqttHandoff(MqttOutbox outbox, ConfirmedPublisher publisher, JsonMapper json) {
        this.outbox = outbox;
        this.publisher = publisher;
        this.json = json;
    }

    /**
     * Fails with the store's or RabbitMQ's exception when a step did not happen (a transport
     * failure: the caller retries, the steps are idempotent). Messages the box dropped to make room
     * (collapse key, full box) are settled as failed on the way.
     */
    public CompletableFuture<Placement> hand(PushBatch message, Target target) {
        return hand(message, target, false);
    }

    /** As {@link #hand}, for a message accepted a moment ago (see {@link MqttOutbox#putNew}). */
    public CompletableFuture<Placement> handNew(PushBatch message, Target target) {
        return hand(message, target, true);
    }

    private CompletableFuture<Placement> hand(PushBatch message, Target target, boolean fresh) {
        String deviceId = target.token();
        MqttOutbox.Entry entry = new MqttOutbox.Entry(message.messageId(), payload(message), message.expiresAt().toEpochMilli());
        CompletableFuture<MqttOutbox.Placement> put = fresh
                ? outbox.putNew(message.appId(), deviceId, entry, message.collapseKey())
                : outbox.put(message.appId(), deviceId, entry, message.collapseKey());
        return put.thenCompose(placement -> {
            CompletableFuture<?> replaced = failAll(message.appId(), deviceId, placement.collapsed(), "COLLAPSED");
            CompletableFuture<?> evicted = failAll(message.appId(), deviceId, placement.evicted(), "OFFLINE_STORE_FULL");
            CompletableFuture<Placement> notified = placement.node()
                    .map(node -> notifyNode(node, new MqttDelivery(message.appId(), deviceId, message.messageId(),
                            entry.payload(), entry.expiresAt())))
                    .orElse(CompletableFuture.completedFuture(Placement.BOXED));
            return CompletableFuture.allOf(replaced, evicted, notified).thenCompose(done -> notified);
        });
    }

    /** Undoes {@link #hand} in the box (see {@link MqttOutbox#withdraw}); a node's copy already confirmed stays. */
    public CompletableFuture<Void> withdraw(PushBatch message, Target target) {
        return outbox.withdraw(message.appId(), target.token(), message.messageId());
    }

    /** Settles the messages the box dropped for this device as failed with {@code reason}. */
    private CompletableFuture<Void> failAll(String appId, String deviceId, List<String> messageIds, String reason) {
        return CompletableFuture.allOf(messageIds.stream()
                .map(id -> outbox.settle(appId, deviceId, id, Outcome.failed(reason, false)))
                .toArray(CompletableFuture[]::new));
    }

    /**
     * A node whose queue is gone (it stopped, its lease not yet lapsed) cannot take the copy: the
     * message waits in the box for the device's next session. Any other publish failure is a
     * transport failure.
     */
    private CompletableFuture<Placement> notifyNode(String node, MqttDelivery delivery) {
        return publisher.publish(new ConfirmedPublisher.Outgoing(Queues.EXCHANGE, MqttAddresses.nodeQueue(node),
                        delivery.messageId(), delivery))
                .thenApply(confirmed -> Placement.LIVE)
                .exceptionallyCompose(error -> {
                    Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                    if (cause instanceof PublishFailedException failed && failed.reason() == PublishFailedException.Reason.unroutable) {
                        return CompletableFuture.completedFuture(Placement.BOXED);
                    }
                    return CompletableFuture.failedFuture(cause);
                });
    }

    private String payload(PushBatch message) {
        return json.writeValueAsString(MqttPayloads.payload(message));
    }
}
