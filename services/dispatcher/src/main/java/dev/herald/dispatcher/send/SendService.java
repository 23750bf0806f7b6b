package dev.herald.dispatcher.send;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.problem.RequestValidator;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.PublishFailedException;
import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.idempotency.IdempotencyKeys;
import dev.herald.store.mqtt.MqttHandoff;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Accepts a message: idempotency key -> {@code accepted} -> publish -> confirms -> {@code queued}.
 * Nothing is acknowledged to the client before RabbitMQ confirmed every part; if it does not, the
 * status record and the idempotency key are removed and the client gets 503 with Retry-After. A send
 * to one connected MQTT device is published to the device's node rather than a send queue (see
 * {@link #handedToLiveDevice}); its 202 too waits for RabbitMQ's confirm.
 */
public final class SendService {
    private static final Logger log = LoggerFactory.getLogger(SendService.class);

    /**
     * Outcome of a send: the message id, whether it was answered from an earlier request, and its due
     * times when it was scheduled (empty: it is queued).
     */
    public record Accepted(String id, boolean replayed, List<Instant> dueAt) {
        public Accepted {
            dueAt = List.copyOf(dueAt);
        }
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
    private final SendScheduler scheduler;
    private final BrokerAlarm alarm;
    private final MqttHandoff handoff;

    public SendService(RequestValidator validator, MessageStatusStore status, DeviceRegistry devices,
                       IdempotencyKeys idempotencyKeys, ConfirmedPublisher publisher, SendMetrics metrics,
                       DispatcherProperties properties, JsonMapper json, Clock clock, SendScheduler scheduler,
                       BrokerAlarm alarm, MqttHandoff handoff) {
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
        this.scheduler = scheduler;
        this.alarm = alarm;
        this.handoff = handoff;
    }

    public Accepted send(String appId, SendRequest request, Optional<String> idempotencyKey) {
        validator.validate(request);
        SendPlan plan = SendPlan.of(request, properties, json);
        List<Instant> dueTimes = request.scheduled() ? scheduler.dueTimes(appId, request) : List.of();
        String messageId = MessageIds.next(clock.millis());
        if (idempotencyKey.isEmpty()) {
            accept(appId, messageId, plan, request, dueTimes);
            return new Accepted(messageId, false, dueTimes);
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
                return new Accepted(other.messageId(), true, first.get().dueAt());
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
            accept(appId, messageId, plan, request, dueTimes);
        } catch (RuntimeException e) {
            releaseQuietly(appId, key, mine);
            throw e;
        }
        return new Accepted(messageId, false, dueTimes);
    }

    private void accept(String appId, String messageId, SendPlan plan, SendRequest request, List<Instant> dueTimes) {
        if (dueTimes.isEmpty()) {
            publish(appId, messageId, plan, clock.instant());
        } else {
            scheduler.schedule(appId, messageId, request, dueTimes);
            metrics.accepted(plan.kind(), plan.priority());
        }
    }

    /**
     * Publishes a scheduled send that is due, through the same path as an immediate one; its status
     * keeps the time it was accepted. Throws {@link PublishFailedException} when RabbitMQ did not
     * confirm it (the status stays: the scheduler tries again).
     */
    public void fire(String appId, String messageId, SendRequest request, Instant acceptedAt) throws PublishFailedException {
        SendPlan plan = resolveShortDeviceList(appId, SendPlan.of(request, properties, json));
        await(status.accepted(messageId, appId, plan.total(), acceptedAt));
        publishConfirmed(appId, messageId, plan, plan.messages(messageId, appId, clock.instant(), properties.batchSize()));
        markQueued(appId, messageId);
    }

    /**
     * Publishes one zone group of a send at a local time: the targets the scheduler resolved, as
     * batches numbered from {@code firstBatch} (so groups never share a batch number, and a group
     * fired again after a lost claim repeats its numbers). {@code audienceSize} is the whole
     * audience's, what a spread throttle divides. Throws {@link PublishFailedException} as
     * {@link #fire} does.
     */
    public void fireTargets(String appId, String messageId, SendRequest request, List<Target> targets, int firstBatch,
                            long audienceSize) throws PublishFailedException {
        if (targets.isEmpty()) {
            return;
        }
        SendPlan plan = SendPlan.of(request, properties, json).withTargets(targets, audienceSize);
        publishConfirmed(appId, messageId, plan, plan.messages(messageId, appId, clock.instant(), properties.batchSize(), firstBatch));
    }

    private void publishConfirmed(String appId, String messageId, SendPlan plan, List<ConfirmedPublisher.Outgoing> messages)
            throws PublishFailedException {
        long started = System.nanoTime();
        try {
            Optional<String> blocked = alarm.blocked();
            if (blocked.isPresent()) {
                throw new PublishFailedException(PublishFailedException.Reason.blocked,
                        "RabbitMQ blocks publishing: " + blocked.get(), null);
            }
            publisher.publishAll(messages, properties.publishTimeout());
        } catch (PublishFailedException e) {
            metrics.failed(e.reason());
            log.warn("send {} of app {} not published: RabbitMQ {} ({})", messageId, appId, e.reason(), e.getMessage());
            throw e;
        }
        metrics.latency(System.nanoTime() - started);
        messages.forEach(message -> metrics.published(message.routingKey()));
    }

    private void publish(String appId, String messageId, SendPlan unresolved, Instant acceptedAt) {
        SendPlan plan = resolveShortDeviceList(appId, unresolved);
        await(status.accepted(messageId, appId, plan.total(), acceptedAt));
        List<ConfirmedPublisher.Outgoing> messages = plan.messages(messageId, appId, acceptedAt, properties.batchSize());
        Optional<PushBatch> oneDevice = properties.directMqtt() ? oneMqttDevice(messages) : Optional.empty();
        if (oneDevice.isEmpty() || !handedToLiveDevice(oneDevice.get())) {
            try {
                publishConfirmed(appId, messageId, plan, messages);
            } catch (PublishFailedException e) {
                oneDevice.ifPresent(this::withdrawQuietly);
                discardQuietly(messageId);
                throw Problems.unavailable("the message queue did not accept the message (" + e.reason()
                        + "); nothing was queued, retry later", 5);
            }
        }
        metrics.accepted(plan.kind(), plan.priority());
        markQueued(appId, messageId);
    }

    /** The send's one batch when it is for one MQTT device and unthrottled: what the dispatcher may hand over itself. */
    private static Optional<PushBatch> oneMqttDevice(List<ConfirmedPublisher.Outgoing> messages) {
        if (messages.size() == 1 && messages.getFirst().body() instanceof PushBatch batch && batch.targets().size() == 1
                && batch.targets().getFirst().channel() == Channel.mqtt && batch.throttlePerMinute() == null) {
            return Optional.of(batch);
        }
        return Optional.empty();
    }

    /**
     * Hands a single-device MQTT send to the device itself (its box, and a copy on the queue of the
     * node holding it, which RabbitMQ confirms) instead of through a send queue and the gateway: two
     * hops and a quorum-queue round trip fewer between the API and the device. False when the device
     * is offline or a step failed: the caller then queues it as any send (the gateway's hand-off
     * finds it boxed already and delivers it once). Under a RabbitMQ alarm the queue path answers.
     */
    private boolean handedToLiveDevice(PushBatch batch) {
        if (alarm.blocked().isPresent()) {
            return false;
        }
        Target target = batch.targets().getFirst();
        long started = System.nanoTime();
        MqttHandoff.Placement placement;
        try {
            placement = handoff.handNew(batch, target).get(properties.publishTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException | TimeoutException e) {
            log.debug("send {} of app {} not handed to its MQTT device, queued instead: {}", batch.messageId(),
                    batch.appId(), e.toString());
            metrics.mqttHandoff("failed");
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            metrics.mqttHandoff("failed");
            return false;
        }
        metrics.mqttHandoff(placement.name().toLowerCase(java.util.Locale.ROOT));
        if (placement == MqttHandoff.Placement.BOXED) {
            return false;
        }
        metrics.latency(System.nanoTime() - started);
        // No "handed" outcome is recorded, unlike the gateway's hand-off: there it marks the target
        // done for a redelivered batch to skip, and this send has no batch on a queue. The connection
        // manager settles the target (delivered) as for any MQTT message.
        return true;
    }

    private void withdrawQuietly(PushBatch batch) {
        try {
            await(handoff.withdraw(batch, batch.targets().getFirst()));
        } catch (RuntimeException e) {
            log.warn("refused send {} of app {} could not be taken out of its MQTT device's box: {}", batch.messageId(),
                    batch.appId(), e.toString());
        }
    }

    private void markQueued(String appId, String messageId) {
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
