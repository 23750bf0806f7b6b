package dev.herald.gateway.mqtt;

import dev.herald.contract.Channel;
import dev.herald.contract.MqttDelivery;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.PublishFailedException;
import dev.herald.contract.payload.MqttPayloads;
import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.ProviderSender;
import dev.herald.store.app.App;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.status.Outcome;
import dev.herald.store.mqtt.MqttAddresses;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code mqtt} channel: puts the message into the device's box in Redis (see {@link MqttOutbox})
 * and, when a connection-manager node holds the device live, hands it a copy on that node's own
 * queue (no broadcast). The final outcome comes from the connection manager: {@code delivered} on
 * the device's PUBACK. An offline device gets the box drained when it connects.
 */
public final class MqttSender implements ProviderSender {
    private static final Logger log = LoggerFactory.getLogger(MqttSender.class);

    private final MqttOutbox outbox;
    private final ConfirmedPublisher publisher;
    private final JsonMapper json;

    public MqttSender(MqttOutbox outbox, ConfirmedPublisher publisher, JsonMapper json) {
        this.outbox = outbox;
        this.publisher = publisher;
        this.json = json;
    }

    @Override
    public Channel channel() {
        return Channel.mqtt;
    }

    @Override
    public Mono<ProviderResponse> send(App app, PushBatch message, Target target) {
        String deviceId = target.token();
        MqttOutbox.Entry entry = new MqttOutbox.Entry(message.messageId(), payload(message), message.expiresAt().toEpochMilli());
        return Mono.fromFuture(() -> outbox.put(message.appId(), deviceId, entry, message.collapseKey())
                .thenCompose(placement -> {
                    CompletableFuture<?> replaced = failAll(message.appId(), deviceId, placement.collapsed(), "COLLAPSED");
                    CompletableFuture<?> evicted = failAll(message.appId(), deviceId, placement.evicted(), "OFFLINE_STORE_FULL");
                    CompletableFuture<Void> notified = placement.node()
                            .map(node -> notifyNode(node, new MqttDelivery(message.appId(), deviceId, message.messageId(),
                                    entry.payload(), entry.expiresAt())))
                            .orElse(CompletableFuture.completedFuture(null));
                    return CompletableFuture.allOf(replaced, evicted, notified);
                }))
                .thenReturn(ProviderResponse.HANDED_OFF);
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
     * transport failure, retried (the box put is idempotent).
     */
    private CompletableFuture<Void> notifyNode(String node, MqttDelivery delivery) {
        return publisher.publish(new ConfirmedPublisher.Outgoing(Queues.EXCHANGE, MqttAddresses.nodeQueue(node),
                        delivery.messageId(), delivery))
                .exceptionallyCompose(error -> {
                    Throwable cause = error instanceof java.util.concurrent.CompletionException ? error.getCause() : error;
                    if (cause instanceof PublishFailedException failed && failed.reason() == PublishFailedException.Reason.unroutable) {
                        log.debug("node {} has no queue; {} waits in the box", node, delivery.messageId());
                        return CompletableFuture.completedFuture(null);
                    }
                    return CompletableFuture.failedFuture(cause);
                });
    }

    private String payload(PushBatch message) {
        return json.writeValueAsString(MqttPayloads.payload(message));
    }
}
