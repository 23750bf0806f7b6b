package dev.herald.contract;

import java.time.Instant;
import java.util.Objects;

/**
 * A send whose audience must be expanded behind the queue (a topic, or a list of device ids), so
 * the Dispatcher can accept it in milliseconds however large the audience is. The expander turns
 * it into {@link PushBatch}es.
 *
 * @param topic     the topic whose subscribers receive the message, or null
 * @param deviceIds explicit device ids, or empty
 */
public record AudienceJob(String messageId, String appId, Priority priority, Notification notification,
                          String collapseKey, Instant acceptedAt, Instant expiresAt,
                          String topic, java.util.List<String> deviceIds) {
    public AudienceJob {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(appId, "appId");
        deviceIds = deviceIds == null ? java.util.List.of() : java.util.List.copyOf(deviceIds);
        if ((topic == null) == deviceIds.isEmpty()) {
            throw new IllegalArgumentException("exactly one of topic or deviceIds");
        }
    }

    public PushBatch batch(int number, java.util.List<Target> targets) {
        return new PushBatch(messageId, appId, number, priority, notification, collapseKey,
                acceptedAt, expiresAt, targets);
    }
}
