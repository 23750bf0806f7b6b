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

    /** Header naming why a target or delivery was dead-lettered. */
    public static final String REASON_HEADER = "x-herald-reason";

    private Queues() {
    }

    public static String sendQueue(Priority priority) {
        return priority == Priority.high ? SEND_HIGH : SEND_NORMAL;
    }
}
