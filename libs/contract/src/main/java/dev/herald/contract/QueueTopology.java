package dev.herald.contract;

import java.util.List;
import java.util.Map;

/**
 * The queue topology every service declares identically (RabbitMQ refuses a redeclaration with
 * other arguments): durable quorum queues, each dead-lettering at-least-once into {@link Queues#DEAD}
 * and giving up on a delivery that keeps failing after {@link #DELIVERY_LIMIT} attempts, so one
 * poison message cannot cycle forever.
 */
public final class QueueTopology {
    public static final int DELIVERY_LIMIT = 20;

    /** Queues bound to {@link Queues#EXCHANGE} with their own name as routing key. */
    public static final List<String> WORK_QUEUES = List.of(Queues.SEND_HIGH, Queues.SEND_NORMAL, Queues.AUDIENCE);

    private QueueTopology() {
    }

    public static Map<String, Object> workQueueArguments() {
        return Map.of(
                "x-queue-type", "quorum",
                "x-dead-letter-exchange", Queues.DEAD_LETTER_EXCHANGE,
                "x-dead-letter-strategy", "at-least-once",
                "x-overflow", "reject-publish",
                "x-delivery-limit", DELIVERY_LIMIT);
    }

    /** How long a parked batch waits before it goes back to its send queue (then it asks for tokens again). */
    public static final int PARK_DELAY_MS = 1_000;

    /**
     * The parking queue: every entry waits the same time (a queue TTL, so they expire in order) and is
     * then dead-lettered, at least once, to the push exchange under its original routing key.
     */
    public static Map<String, Object> parkedQueueArguments() {
        return Map.of(
                "x-queue-type", "quorum",
                "x-message-ttl", PARK_DELAY_MS,
                "x-dead-letter-exchange", Queues.EXCHANGE,
                "x-dead-letter-strategy", "at-least-once",
                "x-overflow", "reject-publish");
    }

    public static Map<String, Object> deadQueueArguments() {
        return Map.of("x-queue-type", "quorum");
    }
}
