package dev.herald.store.status;

import dev.herald.store.redis.RedisScript;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Where the expansion of a topic or device-list send stands ({@code expand:<id>}): the cursor to
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

    private final RedisAsyncCommands<String, String> redis;
    private final RedisScript advance;
    private final Duration ttl;

    public ExpansionProgress(RedisAsyncCommands<String, String> redis, Duration ttl) {
        this.redis = redis;
        this.ttl = ttl;
        this.advance = RedisScript.fromClasspath("/dev/herald/store/lua/expansion_advance.lua", ScriptOutputType.INTEGER, redis);
    }

    public CompletableFuture<Step> load(String messageId) {
        return redis.hmget("expand:" + messageId, "cursor", "batch").toCompletableFuture().thenApply(values ->
                values.get(0).hasValue()
                        ? new Step(values.get(0).getValue(), Integer.parseInt(values.get(1).getValue()))
                        : new Step("0", 0));
    }

    /** Records that targets up to {@code next} are queued and {@code queuedTargets} more belong to the message. */
    public CompletableFuture<Void> advance(String messageId, Step next, int queuedTargets) {
        return advance.<Long>run(redis, new String[] {"expand:" + messageId, "msg:" + messageId},
                next.cursor(), String.valueOf(next.nextBatch()), String.valueOf(queuedTargets),
                String.valueOf(ttl.toSeconds())).thenApply(ignored -> null);
    }
}
