package dev.herald.gateway.delivery;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
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

    /**
     * One spec for every call (it is immutable; each subscription keeps its own attempts): built per
     * call, its Duration division (BigDecimal) was 3% of the gateway's samples in the fan-out.
     */
    private static final RetryBackoffSpec WAITED_OUT = Retry.backoff(
                    Duration.ofMinutes(GIVE_UP_AFTER_MINUTES).dividedBy(LONGEST_BACKOFF), FIRST_BACKOFF)
            .maxBackoff(LONGEST_BACKOFF).filter(RedisOutage::passes);

    private RedisOutage() {
    }

    /**
     * {@code call}'s answer, called again with backoff while it fails with an error that passes. The
     * retry's machinery is set up only once a call has failed: set up for every target's call, its
     * subscriber walked the whole operator chain for the context (the top frame of the fan-out
     * profile, docs/perf/).
     */
    static <T> Mono<T> rideOut(Supplier<? extends CompletableFuture<? extends T>> call) {
        Mono<T> once = Mono.fromFuture(call);
        return once.onErrorResume(RedisOutage::passes, failed -> once.delaySubscription(FIRST_BACKOFF).retryWhen(WAITED_OUT));
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
