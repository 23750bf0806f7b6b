package dev.herald.store.app;

import dev.herald.store.keys.RedisKeys;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Which app a key id was issued to ({@code apikey:<keyId>} -> app id), written when the admin API
 * issues a key. Only consulted when a key does not fit the app it was presented for, to tell "a key of
 * another app" (403) from "not a key" (401); the hot path never reads it.
 */
public final class ApiKeyIndex {
    private final RedisClusterAsyncCommands<String, String> redis;

    public ApiKeyIndex(RedisClusterAsyncCommands<String, String> redis) {
        this.redis = redis;
    }

    private static String key(String keyId) {
        return RedisKeys.apiKey(keyId);
    }

    public CompletableFuture<Void> issued(String keyId, String appId) {
        return redis.set(key(keyId), appId).toCompletableFuture().thenApply(ignored -> null);
    }

    public CompletableFuture<Void> revoked(String keyId) {
        return redis.del(key(keyId)).toCompletableFuture().thenApply(ignored -> null);
    }

    public CompletableFuture<Optional<String>> appOf(String keyId) {
        return redis.get(key(keyId)).toCompletableFuture().thenApply(Optional::ofNullable);
    }
}
