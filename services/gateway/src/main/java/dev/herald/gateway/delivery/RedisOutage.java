package dev.herald.gateway.delivery;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import java.time.Duration;
import java.util.List;
import reactor.util.retry.Retry;
import reactor.util.retry.RetryBackoffSpec;

/**
 * How a target's Redis calls after its batch has started (its outcome, a retry's cancel check, a
 * redelivered target's skip) ride out a Redis that cannot answer for a while (restarting,
 * unreachable, full): tried again, with backoff, for up to about {@value #GIVE_UP_AFTER_MINUTES}
 * minutes, rather than failing the batch. A failed batch is redelivered, and every target of it the
 * provider had accepted but Redis had not recorded is sent again: with Redis full for 5 s that was
 * 957 duplicates, and 346 for a 10 s partition (BrokerAndCacheFaultsIT).
 * Retried, the outcome is recorded once Redis is back; meanwhile the target keeps its in-flight
 * permit, so the replica stops sending once its permits all wait for Redis. The calls are
 * idempotent (a target's outcome is counted once), so one whose answer was lost may be repeated.
 */
final class RedisOutage {
    private static final int GIVE_UP_AFTER_MINUTES = 5;
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
    private static final Duration LONGEST_BACKOFF = Duration.ofSeconds(2);
    /** Redis errors that pass: out of memory, loading its data after a restart, a busy script, a failover. */
    private static final List<String> TRANSIENT_ERRORS = List.of("OOM", "LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN",
            "MASTERDOWN", "READONLY");

    private RedisOutage() {
    }

    static RetryBackoffSpec waitedOut() {
        long attempts = Duration.ofMinutes(GIVE_UP_AFTER_MINUTES).dividedBy(LONGEST_BACKOFF);
        return Retry.backoff(attempts, FIRST_BACKOFF).maxBackoff(LONGEST_BACKOFF).filter(RedisOutage::passes);
    }

    /** A connection lost or refused, a timeout, or one of {@link #TRANSIENT_ERRORS}; not a bug (a script error). */
    static boolean passes(Throwable failure) {
        if (failure instanceof RedisCommandExecutionException refused) {
            String message = String.valueOf(refused.getMessage());
            return TRANSIENT_ERRORS.stream().anyMatch(message::startsWith);
        }
        return failure instanceof RedisException;
    }
}
