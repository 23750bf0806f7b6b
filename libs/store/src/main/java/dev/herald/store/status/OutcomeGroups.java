package dev.herald.store.status;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.ScriptOutputType;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Records target outcomes one message at a time in groups (a group commit): a message has at most
 * one {@code outcome_record_all} call on its way, and the outcomes that finish meanwhile go together
 * in the next one, followed by one {@code stats_add} for the app's totals. A fan-out of thousands of
 * targets thus makes a few Redis calls per batch of answers instead of two per target, and the
 * groups grow by themselves as the load does. Each caller's future completes when its own outcome
 * is recorded (or fails with its group), exactly as with one call per target: the gateway's
 * in-flight permit and the batch's acknowledgement still wait for it.
 *
 * <p>A message's first outcome goes at once (a single send's status is not held back). When a
 * call returns and fewer outcomes than a full call are waiting, the next call waits {@code linger}
 * first: a fan-out's outcomes arrive a few at a time, and without the wait each Redis round trip
 * carried about three of them (0.58 function calls per notification in the 2026-11-28 fan-out
 * profile, 41 µs of Redis's time per notification), while a few milliseconds gather tens.
 */
final class OutcomeGroups {
    /** The most outcomes in one call: a function runs alone in Redis, so it must stay short. */
    static final int MOST_PER_CALL = 500;

    private final HeraldFunctions functions;
    private final Duration ttl;
    private final Clock clock;
    private final Executor afterLinger;
    private final ConcurrentHashMap<String, Group> open = new ConcurrentHashMap<>();

    OutcomeGroups(HeraldFunctions functions, Duration ttl, Clock clock, Duration linger) {
        this(functions, ttl, clock, linger.isZero() ? Runnable::run
                : CompletableFuture.delayedExecutor(linger.toNanos(), TimeUnit.NANOSECONDS));
    }

    /** {@code afterLinger} runs a group's next call once the linger is over (tests run it by hand). */
    OutcomeGroups(HeraldFunctions functions, Duration ttl, Clock clock, Executor afterLinger) {
        this.functions = functions;
        this.ttl = ttl;
        this.clock = clock;
        this.afterLinger = afterLinger;
    }

    /** One target's outcome waiting to be recorded; {@code recorded} is true if it was counted now. */
    private record Pending(String appId, int batch, String targetKey, Outcome outcome, CompletableFuture<Boolean> recorded) {
    }

    /** A message's outcomes not yet sent to Redis, and whether a call of its is on its way. */
    private static final class Group {
        final String messageId;
        final Queue<Pending> queue = new ArrayDeque<>();
        boolean calling;
        boolean closed;

        Group(String messageId) {
            this.messageId = messageId;
        }
    }

    CompletableFuture<Boolean> record(String messageId, String appId, int batch, String targetKey, Outcome outcome) {
        Pending pending = new Pending(appId, batch, targetKey, outcome, new CompletableFuture<>());
        while (true) {
            Group group = open.computeIfAbsent(messageId, Group::new);
            synchronized (group) {
                if (group.closed) {
                    continue;   // it emptied and left the map meanwhile: the next one takes this outcome
                }
                group.queue.add(pending);
                if (group.calling) {
                    return pending.recorded();
                }
                group.calling = true;
            }
            callNext(group);
            return pending.recorded();
        }
    }

    /** Sends what the group holds, then again when that call ends, until nothing is left. */
    private void callNext(Group group) {
        List<Pending> next = new ArrayList<>();
        synchronized (group) {
            while (next.size() < MOST_PER_CALL && !group.queue.isEmpty()) {
                next.add(group.queue.poll());
            }
            if (next.isEmpty()) {
                group.calling = false;
                group.closed = true;
                open.remove(group.messageId, group);
                return;
            }
        }
        call(group.messageId, next).whenComplete((done, error) -> afterCall(group));
    }

    /** A full call's worth, or nothing (the group closes), goes on at once; a few wait for more. */
    private void afterCall(Group group) {
        int waiting;
        synchronized (group) {
            waiting = group.queue.size();
        }
        if (waiting == 0 || waiting >= MOST_PER_CALL) {
            callNext(group);
        } else {
            afterLinger.execute(() -> callNext(group));
        }
    }

    private CompletableFuture<Void> call(String messageId, List<Pending> group) {
        String[] args = new String[2 + 5 * group.size()];
        args[0] = String.valueOf(ttl.toSeconds());
        args[1] = String.valueOf(clock.millis());
        int i = 2;
        for (Pending pending : group) {
            Outcome outcome = pending.outcome();
            args[i++] = pending.targetKey();
            args[i++] = String.valueOf(pending.batch());
            args[i++] = outcome.kind().name();
            args[i++] = outcome.reason() == null ? "" : outcome.reason();
            args[i++] = outcome.tokenRemoved() ? "1" : "0";
        }
        return functions.<List<Long>>call(Function.OUTCOME_RECORD_ALL, ScriptOutputType.MULTI,
                        new String[] {RedisKeys.message(messageId), RedisKeys.messageDone(messageId)}, args)
                .thenCompose(codes -> countForApps(group, codes).thenApply(counted -> codes))
                .handle((codes, error) -> {
                    for (int n = 0; n < group.size(); n++) {
                        if (error != null) {
                            group.get(n).recorded().completeExceptionally(error);
                        } else {
                            group.get(n).recorded().complete(Recording.of(codes.get(n)) == Recording.RECORDED);
                        }
                    }
                    return null;
                });
    }

    /**
     * The app's totals, after the message's step said which outcomes were counted now. A handed MQTT
     * target is left out: it is not final (the connection manager counts it when it settles), and no
     * total or bucket has a handed field, so counting it cost Redis a function call per MQTT message
     * for counters nobody read.
     */
    private CompletableFuture<Void> countForApps(List<Pending> group, List<Long> codes) {
        Map<String, Map<String, Long>> byApp = new LinkedHashMap<>();
        for (int n = 0; n < group.size(); n++) {
            Pending pending = group.get(n);
            if (Recording.of(codes.get(n)) != Recording.RECORDED || pending.outcome().kind() == Outcome.Kind.handed) {
                continue;
            }
            Map<String, Long> counters = byApp.computeIfAbsent(pending.appId(), app -> new LinkedHashMap<>());
            counters.merge(pending.outcome().kind().name(), 1L, Long::sum);
            if (pending.outcome().reason() != null && !pending.outcome().reason().isEmpty()) {
                counters.merge("reason:" + pending.outcome().reason(), 1L, Long::sum);
            }
            if (pending.outcome().tokenRemoved()) {
                counters.merge("tokensRemoved", 1L, Long::sum);
            }
        }
        return CompletableFuture.allOf(byApp.entrySet().stream().map(app -> {
            List<String> args = new ArrayList<>(List.of(MessageStatusStore.bucketTtlSeconds()));
            app.getValue().forEach((field, increment) -> {
                args.add(field);
                args.add(String.valueOf(increment));
            });
            return functions.<Long>call(Function.STATS_ADD, ScriptOutputType.INTEGER,
                    MessageStatusStore.appStatsKeys(app.getKey(), clock.millis()), args.toArray(String[]::new));
        }).toArray(CompletableFuture[]::new));
    }
}
