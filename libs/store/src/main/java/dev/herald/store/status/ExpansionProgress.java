package dev.herald.store.status;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Where the expansion of a topic or device-list send stands ({@code expand:{<id>}}): the cursor to
 * continue from and the next batch number. A gateway that dies mid-expansion leaves this behind,
 * and the redelivered job resumes from it; the page in progress is republished with the same batch
 * numbers, which deduplication recognises as a redelivery.
 */
public final class ExpansionProgress {
    public static final String DONE = "done";

    /** @param cursor "0" before the first page, {@link #DONE} when finished */
    public record Step(String cursor, int nextBatch) {
        public boolean finished() {
            return DONE.equals(cursor);
        }
    }

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final Duration ttl;

    public ExpansionProgress(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, Duration ttl) {
        this.redis = redis;
        this.functions = functions;
        this.ttl = ttl;
    }

    public CompletableFuture<Step> load(String messageId) {
        return redis.hmget(RedisKeys.expansion(messageId), "cursor", "batch").toCompletableFuture().thenApply(values ->
                values.get(0).hasValue()
                        ? new Step(values.get(0).getValue(), Integer.parseInt(values.get(1).getValue()))
                        : new Step("0", 0));
    }

    /** Records that targets up to {@code next} are queued and {@code queuedTargets} more belong to the message. */
    public CompletableFuture<Void> advance(String messageId, Step next, int queuedTargets) {
        return functions.<Long>call(HeraldFunctions.Function.EXPANSION_ADVANCE, ScriptOutputType.INTEGER,
                new String[] {RedisKeys.expansion(messageId), RedisKeys.message(messageId)},
                next.cursor(), String.valueOf(next.nextBatch()), String.valueOf(queuedTargets),
                String.valueOf(ttl.toSeconds())).thenApply(ignored -> null);
    }
}
