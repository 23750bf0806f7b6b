package dev.herald.contract;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * The unit of work on a send queue: one message to a batch of targets. A message to many targets is
 * split into several batches, each acknowledged on its own.
 *
 * @param messageId   the id the Dispatcher returned
 * @param appId       the app (tenant) whose credentials deliver it
 * @param batch       the batch number within the message, 0-based; deduplication tells a
 *                    redelivered batch from a duplicate target in another batch by it
 * @param priority    lane and provider priority
 * @param notification what to deliver
 * @param collapseKey replaces an undelivered older message with the same key, may be null
 * @param acceptedAt  when the Dispatcher accepted the message (latency is measured from here)
 * @param expiresAt   after this instant the message is not sent but counted as expired
 * @param targets     where to deliver
 * @param throttlePerMinute at most this many targets of the message a minute across all gateway
 *                    replicas ({@link Throttle} resolved for the audience's size), or null: no throttle
 */
public record PushBatch(String messageId, String appId, int batch, Priority priority,
                        Notification notification, String collapseKey,
                        Instant acceptedAt, Instant expiresAt, List<Target> targets, Long throttlePerMinute) {
    public PushBatch {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(appId, "appId");
        Objects.requireNonNull(priority, "priority");
        Objects.requireNonNull(notification, "notification");
        Objects.requireNonNull(acceptedAt, "acceptedAt");
        Objects.requireNonNull(expiresAt, "expiresAt");
        targets = List.copyOf(targets);
    }

    /** A batch of a message sent as fast as its app's quotas allow. */
    public PushBatch(String messageId, String appId, int batch, Priority priority, Notification notification,
                     String collapseKey, Instant acceptedAt, Instant expiresAt, List<Target> targets) {
        this(messageId, appId, batch, priority, notification, collapseKey, acceptedAt, expiresAt, targets, null);
    }

    /** This batch with only {@code remaining} of its targets: what waits for a quota or throttle. */
    public PushBatch withTargets(List<Target> remaining) {
        return new PushBatch(messageId, appId, batch, priority, notification, collapseKey, acceptedAt, expiresAt,
                remaining, throttlePerMinute);
    }

    public boolean expiredAt(Instant now) {
        return !now.isBefore(expiresAt);
    }
}
