package dev.herald.dispatcher.send;

import java.time.Instant;
import java.util.List;

/**
 * Sends for later ({@code sendAt}, {@code sendAtLocalTime}), implemented by
 * {@code dev.herald.dispatcher.schedule}; this package only knows when to hand a send over.
 */
public interface SendScheduler {

    /**
     * Checks a scheduled send's time against the clock and the limits, and answers its due times:
     * one for {@code sendAt}, one per group of zones where {@code sendAtLocalTime} falls at the same
     * instant. Throws a 400 problem for a past, too distant or ambiguous time.
     */
    List<Instant> dueTimes(String appId, SendRequest request);

    /** Records the send as scheduled; it is published when due through {@link SendService#fire}. */
    void schedule(String appId, String messageId, SendRequest request, List<Instant> dueTimes);
}
