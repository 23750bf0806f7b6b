package dev.herald.contract;

import java.time.Instant;
import java.util.Objects;

/**
 * What the gateway puts on {@link Queues#DEAD} for a target it gave up on: the batch narrowed to
 * that one target, so an operator can inspect it and republish {@code work} as it is.
 *
 * @param reason   the last provider reason (e.g. UNAVAILABLE, QUOTA_EXCEEDED, TRANSPORT_ERROR)
 * @param attempts attempts made
 */
public record DeadLetter(PushBatch work, String reason, int attempts, Instant deadLetteredAt) {
    public DeadLetter {
        Objects.requireNonNull(work, "work");
        Objects.requireNonNull(reason, "reason");
    }
}
