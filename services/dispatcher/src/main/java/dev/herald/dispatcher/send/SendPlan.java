package dev.herald.dispatcher.send;

import dev.herald.contract.AudienceJob;
import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.contract.Throttle;
import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.contract.amqp.ConfirmedPublisher.Outgoing;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * A send request checked against the rules that span fields and against the configured limits, and
 * turned into what goes on the queues. Duplicate tokens and device ids are dropped (first wins).
 */
record SendPlan(Kind kind, Priority priority, Notification notification, String collapseKey, Duration ttl,
                List<Target> targets, String topic, List<String> deviceIds, Throttle throttle) {

    enum Kind { tokens, devices, topic }

    private static final Set<String> OVERRIDE_KEYS = Set.of("fcm", "apns");
    private static final Set<String> RESERVED_DATA_KEYS = Set.of("from", "notification", "message_type");

    static SendPlan of(SendRequest request, DispatcherProperties limits, JsonMapper json) {
        SendRequest.To to = request.to();
        int audiences = (to.tokens() != null ? 1 : 0) + (to.devices() != null ? 1 : 0) + (to.topic() != null ? 1 : 0);
        if (audiences != 1) {
            throw Problems.invalidField("to", "must name exactly one of tokens, devices or topic");
        }
        Map<String, String> data = request.data() == null ? Map.of() : request.data();
        for (String key : data.keySet()) {
            if (RESERVED_DATA_KEYS.contains(key) || key.startsWith("google.") || key.startsWith("gcm.")) {
                throw Problems.invalidField("data", "keys from, notification, message_type, google.* and gcm.* are reserved by FCM");
            }
        }
        Map<String, Map<String, Object>> overrides = request.overrides() == null ? Map.of() : request.overrides();
        for (Map.Entry<String, Map<String, Object>> entry : overrides.entrySet()) {
            if (!OVERRIDE_KEYS.contains(entry.getKey())) {
                throw Problems.invalidField("overrides", "keys must be fcm or apns");
            }
            if (entry.getValue() == null) {
                throw Problems.invalidField("overrides." + entry.getKey(), "must be an object");
            }
        }
        if (blank(request.title()) && blank(request.body()) && data.isEmpty() && overrides.isEmpty()) {
            throw Problems.invalidField("body", "the message has no content: give a title, body, data or overrides");
        }
        Duration ttl = request.ttl() == null ? limits.defaultTtl() : Duration.ofSeconds(request.ttl());
        if (ttl.compareTo(limits.maxTtl()) > 0) {
            throw Problems.invalidField("ttl", "must be at most " + limits.maxTtl().toSeconds() + " seconds");
        }
        Notification notification = new Notification(request.title(), request.body(), data, new LinkedHashMap<>(overrides));
        int size = serializedSize(notification, json);
        int limit = limits.maxPayloadBytes() - Notification.PLATFORM_RESERVED_BYTES;
        if (size > limit) {
            throw Problems.tooLarge("the notification (title, body, data and overrides as JSON) is " + size
                    + " bytes; the limit is " + limit + " (the providers' " + limits.maxPayloadBytes() + " less "
                    + Notification.PLATFORM_RESERVED_BYTES + " the platform uses for the message id)");
        }
        Priority priority = request.priority() == null ? Priority.normal : request.priority();
        Throttle throttle = throttle(request.throttle(), ttl);
        if (to.tokens() != null) {
            checkCount("to.tokens", to.tokens().size(), limits);
            Map<String, Target> unique = new LinkedHashMap<>();
            for (SendRequest.TokenTarget token : to.tokens()) {
                if (token.channel() == Channel.webpush) {
                    // Its endpoint is a URL the gateway would call: only registration checks it.
                    throw Problems.invalidField("to.tokens", "the webpush channel takes no raw tokens: register the "
                            + "browser's subscription as a device (PUT /v1/apps/{appId}/devices/{deviceId}) and send to it");
                }
                Target target = new Target(token.channel(), token.token(), null);
                unique.putIfAbsent(target.key(), target);
            }
            return new SendPlan(Kind.tokens, priority, notification, request.collapseKey(), ttl,
                    List.copyOf(unique.values()), null, List.of(), throttle);
        }
        if (to.devices() != null) {
            checkCount("to.devices", to.devices().size(), limits);
            return new SendPlan(Kind.devices, priority, notification, request.collapseKey(), ttl, List.of(), null,
                    List.copyOf(new LinkedHashSet<>(to.devices())), throttle);
        }
        return new SendPlan(Kind.topic, priority, notification, request.collapseKey(), ttl, List.of(), to.topic(), List.of(),
                throttle);
    }

    /** The request's throttle, if any: exactly one of its fields, and a spread that ends before the message expires. */
    private static Throttle throttle(SendRequest.Throttle requested, Duration ttl) {
        if (requested == null) {
            return null;
        }
        if ((requested.perMinute() == null) == (requested.spreadMinutes() == null)) {
            throw Problems.invalidField("throttle", "must name exactly one of perMinute or spreadMinutes");
        }
        if (requested.spreadMinutes() != null && Duration.ofMinutes(requested.spreadMinutes()).compareTo(ttl) > 0) {
            throw Problems.invalidField("throttle.spreadMinutes", "must end within the message's ttl ("
                    + ttl.toSeconds() + " seconds)");
        }
        return new Throttle(requested.perMinute(), requested.spreadMinutes());
    }

    private static void checkCount(String field, int count, DispatcherProperties limits) {
        if (count == 0) {
            throw Problems.invalidField(field, "must not be empty");
        }
        if (count > limits.maxTargetsPerRequest()) {
            throw Problems.invalidField(field, "must name at most " + limits.maxTargetsPerRequest()
                    + " targets; use a topic for larger audiences");
        }
    }

    private static int serializedSize(Notification notification, JsonMapper json) {
        try {
            return json.writeValueAsBytes(notification).length;
        } catch (JacksonException e) {
            throw Problems.invalidField("body", "contains text that cannot be encoded as UTF-8 (an unpaired surrogate?)");
        }
    }

    private static boolean blank(String value) {
        return value == null || value.isEmpty();
    }

    /**
     * This device-list send with its devices already looked up: it is queued as batches of those
     * targets instead of an audience job. Devices not found are left out, as the gateway's expansion
     * leaves them out.
     */
    SendPlan withResolvedDevices(List<Target> resolved) {
        if (kind != Kind.devices || resolved.isEmpty()) {
            throw new IllegalArgumentException("only a device-list send can take resolved targets, and at least one");
        }
        return new SendPlan(kind, priority, notification, collapseKey, ttl, List.copyOf(resolved), topic, deviceIds, throttle);
    }

    /**
     * This send addressed to targets resolved elsewhere (one page of the scheduler's zone group),
     * queued as batches whatever the audience was. A spread throttle is turned into the rate that
     * spreads the whole audience ({@code audienceSize}), not this page, over its minutes.
     */
    SendPlan withTargets(List<Target> resolved, long audienceSize) {
        Throttle rate = throttle == null ? null : new Throttle(throttle.perMinuteFor(audienceSize), null);
        return new SendPlan(kind, priority, notification, collapseKey, ttl, List.copyOf(resolved), topic, deviceIds, rate);
    }

    /** Whether the audience is still to be expanded by the gateway (a topic, or devices not looked up here). */
    boolean needsExpansion() {
        return targets.isEmpty();
    }

    /** Targets known now: the tokens or resolved devices, or empty while an audience waits to be expanded. */
    Optional<Integer> total() {
        return needsExpansion() ? Optional.empty() : Optional.of(targets.size());
    }

    /** What to publish: batches of the known targets to the priority's send queue, or one audience job. */
    List<Outgoing> messages(String messageId, String appId, Instant acceptedAt, int batchSize) {
        return messages(messageId, appId, acceptedAt, batchSize, 0);
    }

    /** As {@link #messages(String, String, Instant, int)}, the batches numbered from {@code firstBatch}. */
    List<Outgoing> messages(String messageId, String appId, Instant acceptedAt, int batchSize, int firstBatch) {
        Instant expiresAt = acceptedAt.plus(ttl);
        if (needsExpansion()) {
            AudienceJob job = new AudienceJob(messageId, appId, priority, notification, collapseKey, acceptedAt,
                    expiresAt, topic, deviceIds, throttle);
            return List.of(new Outgoing(Queues.EXCHANGE, Queues.AUDIENCE, messageId, job));
        }
        String queue = Queues.sendQueue(priority);
        List<Outgoing> out = new ArrayList<>();
        Long perMinute = throttle == null ? null : throttle.perMinuteFor(targets.size());
        for (int from = 0, number = firstBatch; from < targets.size(); from += batchSize, number++) {
            PushBatch batch = new PushBatch(messageId, appId, number, priority, notification, collapseKey, acceptedAt,
                    expiresAt, targets.subList(from, Math.min(targets.size(), from + batchSize)), perMinute);
            out.add(new Outgoing(Queues.EXCHANGE, queue, messageId, batch));
        }
        return out;
    }
}
