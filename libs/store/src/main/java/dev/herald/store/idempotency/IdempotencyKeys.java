package dev.herald.store.idempotency;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@code Idempotency-Key}s in Redis: {@code idem:<app>:<key>} -> {@code <messageId>|<sha256 of the
 * request>|<claimed at, epoch ms>}, set only if absent and expiring after the configured TTL. The
 * first request to claim a key sends; later ones with the same key replay its answer. A request
 * that could not publish releases its claim (only its own: compare-and-delete).
 */
public final class IdempotencyKeys {
    /** Who holds a key: the message it produced and the request that produced it. */
    public record Claim(String messageId, String requestHash, long claimedAtMillis) {
        public String encode() {
            return messageId + "|" + requestHash + "|" + claimedAtMillis;
        }

        public static Optional<Claim> decode(String value) {
            if (value == null) {
                return Optional.empty();
            }
            String[] parts = value.split("\\|");
            if (parts.length < 2) {
                return Optional.empty();
            }
            long at = 0;
            if (parts.length > 2) {
                try {
                    at = Long.parseLong(parts[2]);
                } catch (NumberFormatException ignored) {
                    // a value written without a time is treated as old
                }
            }
            return Optional.of(new Claim(parts[0], parts[1], at));
        }
    }

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final Duration ttl;

    public IdempotencyKeys(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, Duration ttl) {
        this.redis = redis;
        this.functions = functions;
        this.ttl = ttl;
    }

    private static String key(String appId, String idempotencyKey) {
        return RedisKeys.idempotency(appId, idempotencyKey);
    }

    /** Claims the key for {@code claim}; empty if claimed now, else the claim that holds it. */
    public CompletableFuture<Optional<Claim>> claim(String appId, String idempotencyKey, Claim claim) {
        String key = key(appId, idempotencyKey);
        return setIfAbsent(key, claim).thenCompose(set -> set
                ? CompletableFuture.completedFuture(Optional.<Claim>empty())
                : redis.get(key).toCompletableFuture().thenCompose(existing -> existing != null
                        ? CompletableFuture.completedFuture(Claim.decode(existing))
                        // expired between SET and GET: try once more
                        : setIfAbsent(key, claim).thenCompose(again -> again
                                ? CompletableFuture.completedFuture(Optional.<Claim>empty())
                                : redis.get(key).toCompletableFuture().thenApply(Claim::decode))));
    }

    /** Replaces an abandoned claim with {@code fresh}; false if someone else changed it first. */
    public CompletableFuture<Boolean> takeOver(String appId, String idempotencyKey, Claim abandoned, Claim fresh) {
        return functions.ask(Function.REPLACE_IF_EQUAL, new String[] {key(appId, idempotencyKey)},
                abandoned.encode(), fresh.encode(), String.valueOf(ttl.toSeconds()));
    }

    /** Deletes the key if {@code mine} still holds it. */
    public CompletableFuture<Void> release(String appId, String idempotencyKey, Claim mine) {
        return functions.ask(Function.DELETE_IF_EQUAL, new String[] {key(appId, idempotencyKey)}, mine.encode())
                .thenApply(ignored -> null);
    }

    private CompletableFuture<Boolean> setIfAbsent(String key, Claim claim) {
        return redis.set(key, claim.encode(), SetArgs.Builder.nx().ex(ttl.toSeconds())).toCompletableFuture()
                .thenApply("OK"::equals);
    }
}
