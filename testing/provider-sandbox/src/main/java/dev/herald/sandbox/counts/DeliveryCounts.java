package dev.herald.sandbox.counts;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.springframework.stereotype.Component;

/**
 * The sandbox's record of what arrived, for tests and benchmarks to assert on. Lock-free: every
 * provider request updates it from the event loop.
 */
@Component
public class DeliveryCounts {
    private final ConcurrentHashMap<String, TokenTally> tokens = new ConcurrentHashMap<>();
    /** (token, message id) pairs already delivered; the key joins them with a character neither contains. */
    private final Set<String> delivered = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, LongAdder> rejected = new ConcurrentHashMap<>();
    private final LongAdder requests = new LongAdder();
    private final LongAdder accepted = new LongAdder();
    private final LongAdder distinctTokens = new LongAdder();
    private final LongAdder duplicates = new LongAdder();

    /** A provider request arrived, before anything is known about it. */
    public void request() {
        requests.increment();
    }

    /** An authenticated request names {@code token}; returns which attempt this is (1-based). */
    public long attempt(String token) {
        return tally(token).attempt();
    }

    /**
     * An accepted delivery. {@code messageId} (the platform's {@code herald_message_id}, may be
     * null) identifies the message so a second delivery of it to the same token counts as duplicate.
     */
    public void accepted(Provider provider, String token, String messageId) {
        accepted.increment();
        if (tally(token).accepted(provider)) {
            distinctTokens.increment();
        }
        if (messageId != null && !delivered.add(token + '\u0000' + messageId)) {
            duplicates.increment();
        }
    }

    public void rejected(String reason) {
        rejected.computeIfAbsent(reason, key -> new LongAdder()).increment();
    }

    public TokenCounts received(String token) {
        TokenTally tally = tokens.get(token);
        return tally == null ? new TokenCounts(token, 0, 0, 0, 0) : tally.snapshot(token);
    }

    public Stats stats() {
        Map<String, Long> reasons = new TreeMap<>();
        rejected.forEach((reason, count) -> reasons.put(reason, count.sum()));
        return new Stats(requests.sum(), accepted.sum(), reasons, distinctTokens.sum(), duplicates.sum());
    }

    /** Forgets everything, including attempts, so {@code throttled<N>-} tokens start over. */
    public void reset() {
        tokens.clear();
        delivered.clear();
        rejected.clear();
        requests.reset();
        accepted.reset();
        distinctTokens.reset();
        duplicates.reset();
    }

    private TokenTally tally(String token) {
        TokenTally tally = tokens.get(token); // the common case without computeIfAbsent's bin lock
        return tally != null ? tally : tokens.computeIfAbsent(token, key -> new TokenTally());
    }
}
