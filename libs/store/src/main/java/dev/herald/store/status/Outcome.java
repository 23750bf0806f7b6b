package dev.herald.store.status;

import java.util.Objects;

/**
 * The final result of delivering a message to one target.
 *
 * @param kind         sent, failed, expired or cancelled (not sent because the message was cancelled); for MQTT targets handed (to the connection manager's
 *                     per-device box, not final) and then delivered (the device's PUBACK), failed or expired
 * @param reason       why it failed (provider reason such as UNREGISTERED, or RETRIES_EXHAUSTED), else null
 * @param tokenRemoved whether the registry dropped the target's token because the provider said it is dead
 */
public record Outcome(Kind kind, String reason, boolean tokenRemoved) {
    public enum Kind { sent, failed, expired, handed, delivered, cancelled }

    public Outcome {
        Objects.requireNonNull(kind, "kind");
    }

    public static Outcome sent() {
        return new Outcome(Kind.sent, null, false);
    }

    /** An MQTT target is in its device's box; the connection manager settles it later. */
    public static Outcome handed() {
        return new Outcome(Kind.handed, null, false);
    }

    /** The device acknowledged the message (MQTT PUBACK). */
    public static Outcome delivered() {
        return new Outcome(Kind.delivered, null, false);
    }

    /** The message was cancelled before this target was sent. */
    public static Outcome cancelled() {
        return new Outcome(Kind.cancelled, null, false);
    }

    public static Outcome expired() {
        return new Outcome(Kind.expired, null, false);
    }

    public static Outcome failed(String reason, boolean tokenRemoved) {
        return new Outcome(Kind.failed, Objects.requireNonNull(reason, "reason"), tokenRemoved);
    }
}
