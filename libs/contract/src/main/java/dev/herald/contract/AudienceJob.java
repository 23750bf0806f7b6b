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
 * @param throttle  how fast the message may be delivered, or null
 */
public record AudienceJob(String messageId, String appId, Priority priority, Notification notification,
                          String collapseKey, Instant acceptedAt, Instant expiresAt,
                          String topic, java.util.List<String> deviceIds, Throttle throttle) {
    public AudienceJob {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(appId, "appId");
        deviceIds = deviceIds == null ? java.util.List.of() : java.util.List.copyOf(deviceIds);
        if ((topic == null) == deviceIds.isEmpty()) {
            throw new IllegalArgumentException("exactly one of topic or deviceIds");
        }
    }

    public AudienceJob(String messageId, String appId, Priority priority, Notification notification,
                       String collapseKey, Instant acceptedAt, Instant expiresAt, String topic,
                       java.util.List<String> deviceIds) {
        this(messageId, appId, priority, notification, collapseKey, acceptedAt, expiresAt, topic, deviceIds, null);
    }

    public PushBatch batch(int number, java.util.List<Target> targets) {
        return batch(number, targets, null);
    }

    /** A batch of the expanded audience, throttled at the rate resolved for the audience's size (or null). */
    public PushBatch batch(int number, java.util.List<Target> targets, Long throttlePerMinute) {
        return new PushBatch(messageId, appId, number, priority, notification, collapseKey,
                acceptedAt, expiresAt, targets, throttlePerMinute);
    }
}
