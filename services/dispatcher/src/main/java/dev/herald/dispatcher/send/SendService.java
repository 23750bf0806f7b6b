package dev.herald.dispatcher.send;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.problem.RequestValidator;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.PublishFailedException;
import dev.herald.contract.Target;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.idempotency.IdempotencyKeys;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Accepts a message: idempotency key -> {@code accepted} -> publish -> confirms -> {@code queued}.
 * Nothing is acknowledged to the client before RabbitMQ confirmed every part; if it does not, the
 * status record and the idempotency key are removed and the client gets 503 with Retry-After.
 */
public final class SendService {
    private static final Logger log = LoggerFactory.getLogger(SendService.class);

    /** Outcome of a send: the message id, and whether it was answered from an earlier request. */
    public record Accepted(String id, boolean replayed) {
    }

    private final RequestValidator validator;
    private final MessageStatusStore status;
    private final DeviceRegistry devices;
    private final IdempotencyKeys idempotencyKeys;
    private final ConfirmedPublisher publisher;
    private final SendMetrics metrics;
    private final DispatcherProperties properties;
    private final JsonMapper json;
    private final JsonMapper canonical;
    private final Clock clock;

    public SendService(RequestValidator validator, MessageStatusStore status, DeviceRegistry devices,
                       IdempotencyKeys idempotencyKeys, ConfirmedPublisher publisher, SendMetrics metrics,
                       DispatcherProperties properties, JsonMapper json, Clock clock) {
        this.validator = validator;
        this.status = status;
        this.devices = devices;
        this.idempotencyKeys = idempotencyKeys;
        this.publisher = publisher;
        this.metrics = metrics;
        this.properties = properties;
        this.json = json;
        this.canonical = json.rebuild()
                .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                .build();
        this.clock = clock;
    }

    public Accepted send(String appId, SendRequest request, Optional<String> idempotencyKey) {
        validator.validate(request);
        SendPlan plan = SendPlan.of(request, properties, json);
        String messageId = MessageIds.next(clock.millis());
        if (idempotencyKey.isEmpty()) {
            publish(appId, messageId, plan);
            return new Accepted(messageId, false);
        }
        String key = idempotencyKey.get();
        IdempotencyKeys.Claim mine = new IdempotencyKeys.Claim(messageId, hash(request), clock.millis());
        Optional<IdempotencyKeys.Claim> holder = await(idempotencyKeys.claim(appId, key, mine));
        while (holder.isPresent()) {
            IdempotencyKeys.Claim other = holder.get();
            if (!other.requestHash().equals(mine.requestHash())) {
                throw Problems.idempotencyKeyReused();
            }
            Optional<MessageStatus> first = await(status.find(other.messageId()));
            if (first.isPresent() && appId.equals(first.get().appId()) && !"accepted".equals(first.get().state())) {
                metrics.replayed();
                return new Accepted(other.messageId(), true);
            }
            long abandonedAfter = 2 * properties.publishTimeout().toMillis() + 1000;
            if (clock.millis() - other.claimedAtMillis() < abandonedAfter) {
                throw Problems.idempotencyKeyInProgress();
            }
            // The request holding the key died between claiming it and queueing: take over.
            if (await(idempotencyKeys.takeOver(appId, key, other, mine))) {
                log.info("idempotency key of app {} taken over from abandoned message {}", appId, other.messageId());
                break;
            }
            holder = await(idempotencyKeys.claim(appId, key, mine));
        }
        try {
            publish(appId, messageId, plan);
        } catch (RuntimeException e) {
            releaseQuietly(appId, key, mine);
            throw e;
        }
        return new Accepted(messageId, false);
    }

    private void publish(String appId, String messageId, SendPlan unresolved) {
        SendPlan plan = resolveShortDeviceList(appId, unresolved);
        Instant acceptedAt = clock.instant();
        await(status.accepted(messageId, appId, plan.total(), acceptedAt));
        List<ConfirmedPublisher.Outgoing> messages = plan.messages(messageId, appId, acceptedAt, properties.batchSize());
        long started = System.nanoTime();
        try {
            publisher.publishAll(messages, properties.publishTimeout());
        } catch (PublishFailedException e) {
            metrics.failed(e.reason());
            log.warn("send {} of app {} not accepted: RabbitMQ {} ({})", messageId, appId, e.reason(), e.getMessage());
            discardQuietly(messageId);
            throw Problems.unavailable("the message queue did not accept the message (" + e.reason()
                    + "); nothing was queued, retry later", 5);
        }
        metrics.latency(System.nanoTime() - started);
        messages.forEach(message -> metrics.published(message.routingKey()));
        metrics.accepted(plan.kind(), plan.priority());
        // Not awaited: the message is safely queued, and failing (or delaying) the answer over a
        // status field would only make the client send it twice. Until it lands, status reads "accepted".
        status.queued(messageId, clock.instant()).whenComplete((ignored, e) -> {
            if (e != null) {
                log.warn("send {} of app {} queued but its status could not be updated: {}", messageId, appId, e.toString());
            }
        });
    }

    /**
     * Looks up a short device list now (one pipelined Redis round trip) so that its batches go
     * straight to the send queue. Through the gateway's audience hop instead, every such send costs
     * another queue message, a publisher confirm and three status writes: on the benchmark's device
     * sends that hop was where the latency went. If none of the devices is registered, the list takes
     * the audience path, which records the send as finished with no targets.
     */
    private SendPlan resolveShortDeviceList(String appId, SendPlan plan) {
        if (plan.kind() != SendPlan.Kind.devices || plan.deviceIds().size() > properties.resolveDevicesUpTo()) {
            return plan;
        }
        List<Target> resolved = await(devices.resolve(appId, plan.deviceIds())).targets();
        return resolved.isEmpty() ? plan : plan.withResolvedDevices(resolved);
    }

    private void discardQuietly(String messageId) {
        try {
            await(status.discard(messageId));
        } catch (RuntimeException e) {
            log.warn("status of unsent message {} could not be removed: {}", messageId, e.toString());
        }
    }

    private void releaseQuietly(String appId, String key, IdempotencyKeys.Claim mine) {
        try {
            await(idempotencyKeys.release(appId, key, mine));
        } catch (RuntimeException e) {
            log.warn("idempotency key of app {} for message {} could not be released: {}", appId, mine.messageId(), e.toString());
        }
    }

    /** SHA-256 of the request as parsed, in a canonical JSON form (map keys sorted): formatting does not matter. */
    private String hash(SendRequest request) {
        byte[] bytes;
        try {
            bytes = canonical.writeValueAsBytes(request);
        } catch (JacksonException e) {
            throw Problems.invalidField("body", "contains text that cannot be encoded as UTF-8 (an unpaired surrogate?)");
        }
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
