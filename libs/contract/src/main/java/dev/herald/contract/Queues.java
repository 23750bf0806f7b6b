package dev.herald.contract;

/**
 * Names of the exchange and queues that carry push work. All queues are durable quorum queues;
 * a delivery the gateway cannot handle is dead-lettered to {@link #DEAD} with its reason.
 */
public final class Queues {
    /** Direct exchange the Dispatcher publishes to; the routing key is the queue name. */
    public static final String EXCHANGE = "herald.push";
    /** Dead-letter exchange (fanout) in front of {@link #DEAD}. */
    public static final String DEAD_LETTER_EXCHANGE = "herald.dead";

    /** Transactional pushes; consumed ahead of and separately from bulk work. */
    public static final String SEND_HIGH = "herald.send.high";
    /** Normal-priority pushes and campaign batches. */
    public static final String SEND_NORMAL = "herald.send.normal";
    /** Topic and device-list sends waiting for their audience to be expanded into batches. */
    public static final String AUDIENCE = "herald.audience";
    /** Work that failed for good, with the reason in the {@code x-herald-reason} header. */
    public static final String DEAD = "herald.dead";

    /**
     * Fanout exchange in front of {@link #PARKED}: a batch that must wait for its app's provider quota
     * or its message's throttle is published here with its send queue as routing key, and dead-lettered
     * back to {@link #EXCHANGE} under that key after {@link QueueTopology#PARK_DELAY_MS}.
     */
    public static final String PARK_EXCHANGE = "herald.park";
    /** Batches waiting for a quota or throttle, off the send queues so other apps' work is not held up. */
    public static final String PARKED = "herald.parked";

    /** Header naming why a target or delivery was dead-lettered. */
    public static final String REASON_HEADER = "x-herald-reason";

    private Queues() {
    }

    public static String sendQueue(Priority priority) {
        return priority == Priority.high ? SEND_HIGH : SEND_NORMAL;
    }
}
