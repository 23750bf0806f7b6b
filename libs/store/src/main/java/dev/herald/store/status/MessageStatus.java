package dev.herald.store.status;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What became of a message, derived from its counters rather than stored as a state field, so
 * concurrent writers (dispatcher, several gateways) never overwrite each other's state.
 *
 * @param state   scheduled (a send for later, none of its due times reached), accepted (recorded, not
 *                yet confirmed by RabbitMQ), queued, sending (some targets done), then sent (all done,
 *                at least one accepted by a provider), delivered (all done, none only sent, at least one
 *                confirmed by the device itself: MQTT PUBACK), failed (all done, none delivered, not all
 *                expired) or expired (all targets expired); after a cancel: cancelling until every
 *                target has an outcome, then cancelled if any target was cancelled (or none was known
 *                yet: a send cancelled while only scheduled), else the state it would have had
 * @param delivered targets whose device acknowledged the message (MQTT only)
 * @param total   targets known so far; final once {@code expanded}
 * @param cancelled targets not sent because the message was cancelled
 * @param cancelledAt when the message was cancelled, or null
 * @param dueAt   due times of a scheduled send not yet fired (one per zone group of a send at a local
 *                time); while none fired, the state is {@code scheduled}; empty once cancelled
 */
public record MessageStatus(String id, String appId, String state, long total, long sent, long failed,
                            long expired, long delivered, boolean expanded, long tokensRemoved, Map<String, Long> failures,
                            Instant acceptedAt, Instant queuedAt, Instant completedAt, long cancelled, Instant cancelledAt,
                            List<Instant> dueAt) {
    public MessageStatus {
        failures = Map.copyOf(failures);
        dueAt = List.copyOf(dueAt);
    }

    public long pending() {
        return Math.max(0, total - sent - failed - expired - delivered - cancelled);
    }

    /** The state of a cancelled message; {@code otherwise} is the state it would have without the cancel. */
    static String afterCancel(boolean completed, long total, long cancelled, String otherwise) {
        if (!completed) {
            return "cancelling";
        }
        return cancelled > 0 || total == 0 ? "cancelled" : otherwise;
    }

    /**
     * Names the state from stored facts. Whether the message is complete is not decided here: that
     * rule lives once, in herald.lua ({@code complete_if_done}), and {@code completed} is the
     * {@code completedAt} it wrote; this only says which final state a complete message ended in.
     */
    static String derive(boolean queued, boolean completed, long total, long sent, long failed, long expired, long delivered) {
        if (completed) {
            if (sent > 0) {
                return "sent";
            }
            if (delivered > 0) {
                return "delivered";
            }
            return expired == total && total > 0 ? "expired" : "failed";
        }
        if (sent + failed + expired + delivered > 0) {
            return "sending";
        }
        return queued ? "queued" : "accepted";
    }
}
