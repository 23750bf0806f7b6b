package dev.herald.store.status;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Cancelling a message. The cancel itself only marks the message ({@code cancelledAt} in
 * {@code msg:{<id>}}); it cannot know which targets are still queued. Each step of the send path
 * reads the mark instead: the gateway once per batch before any provider call (and before a retry),
 * ending the batch's unsent targets as {@code cancelled} in one function call; the audience expander
 * before each page, so a cancelled audience stops growing. Whether a target counts as sent or
 * cancelled is decided by the one step that records it in {@code done:{<id>}} (herald.lua
 * {@code outcome_record}), so no target is ever both. A message that is only scheduled has nothing
 * queued: its targets end cancelled in the cancel's own step.
 */
public final class MessageCancels {
    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final Duration ttl;
    private final Clock clock;

    public MessageCancels(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, Duration ttl, Clock clock) {
        this.redis = redis;
        this.functions = functions;
        this.ttl = ttl;
        this.clock = clock;
    }

    /** Cancels the app's message; a message of another app is {@link Cancellation#NOT_FOUND}. */
    public CompletableFuture<Cancellation> cancel(String id, String appId) {
        return functions.<List<Long>>call(Function.MESSAGE_CANCEL, ScriptOutputType.MULTI, new String[] {RedisKeys.message(id)},
                        String.valueOf(clock.millis()), appId)
                .thenCompose(answer -> {
                    Cancellation cancellation = Cancellation.of(answer.get(0));
                    return countForApp(appId, answer.get(1)).thenApply(counted -> cancellation);
                });
    }

    /** Whether the message was cancelled: what a gateway asks once per batch. */
    public CompletableFuture<Boolean> cancelled(String id) {
        return redis.hexists(RedisKeys.message(id), "cancelledAt").toCompletableFuture();
    }

    /**
     * Ends these targets of a cancelled message's batch as cancelled, those without an outcome yet
     * (a target already sent stays sent); returns how many were cancelled now.
     */
    public CompletableFuture<Long> cancelTargets(String id, String appId, int batch, List<String> targetKeys) {
        if (targetKeys.isEmpty()) {
            return CompletableFuture.completedFuture(0L);
        }
        List<String> args = new ArrayList<>(List.of(String.valueOf(batch), String.valueOf(ttl.toSeconds()),
                String.valueOf(clock.millis())));
        args.addAll(targetKeys);
        return functions.<Long>call(Function.OUTCOME_CANCEL, ScriptOutputType.INTEGER,
                        new String[] {RedisKeys.message(id), RedisKeys.messageDone(id)}, args.toArray(String[]::new))
                .thenCompose(cancelled -> countForApp(appId, cancelled).thenApply(counted -> cancelled));
    }

    /**
     * For the scheduler: releases a due scheduled message for queuing, true unless it was cancelled
     * first (then it must not be queued). A message is only scheduled while its status hash has
     * {@code scheduled = 1}; the release and the cancel are each one step on the message's slot, so
     * exactly one of them wins.
     */
    public CompletableFuture<Boolean> release(String id) {
        return functions.ask(Function.MESSAGE_RELEASE, new String[] {RedisKeys.message(id)});
    }

    /** The app's totals, counted after the message's step (as for every outcome: see MessageStatusStore). */
    private CompletableFuture<Void> countForApp(String appId, long cancelled) {
        if (cancelled == 0) {
            return CompletableFuture.completedFuture(null);
        }
        return redis.hincrby(RedisKeys.appStats(appId), "cancelled", cancelled).toCompletableFuture().thenApply(total -> null);
    }
}
