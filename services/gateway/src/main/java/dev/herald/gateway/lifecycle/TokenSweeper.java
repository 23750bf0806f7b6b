package dev.herald.gateway.lifecycle;

import dev.herald.gateway.GatewayProperties;
import dev.herald.store.device.StaleTokens;
import dev.herald.store.keys.RedisKeys;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The token sweep: once per {@code herald.gateway.token-sweep.interval}, on one gateway replica, it
 * removes every app's devices whose token went unrefreshed for {@code herald.tokens.remove-after}
 * and measures how many are stale. One replica, because each tick first takes a Redis lease
 * ({@code SET NX} with the interval as its TTL): whoever gets it sweeps, the others skip that tick.
 * A sweep overrunning its lease is harmless, only wasteful: each removal re-checks the device's
 * refresh time in its own step and is counted once. It runs in the gateway because the gateway
 * already removes dead tokens and owns the fan-out that skips stale ones; lazily removing during a
 * fan-out would miss devices no campaign reaches.
 */
public final class TokenSweeper implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(TokenSweeper.class);

    private final RedisClusterAsyncCommands<String, String> redis;
    private final StaleTokens stale;
    private final TokenMetrics metrics;
    private final GatewayProperties.TokenSweep config;
    private final String replica = UUID.randomUUID().toString();

    public TokenSweeper(RedisClusterAsyncCommands<String, String> redis, StaleTokens stale, TokenMetrics metrics,
                        GatewayProperties.TokenSweep config) {
        this.redis = redis;
        this.stale = stale;
        this.metrics = metrics;
        this.config = config;
    }

    @Override
    public void run() {
        try {
            sweepIfLeader().join();
        } catch (RuntimeException e) {
            log.warn("token sweep failed: {}", e.toString());
        }
    }

    /** Sweeps if this replica takes the lease; true when it swept. */
    public CompletableFuture<Boolean> sweepIfLeader() {
        return redis.set(RedisKeys.tokenSweepLease(), replica, SetArgs.Builder.nx().px(config.interval().toMillis()))
                .toCompletableFuture()
                .thenCompose(taken -> "OK".equals(taken) ? sweep().thenApply(done -> true) : CompletableFuture.completedFuture(false));
    }

    private CompletableFuture<Void> sweep() {
        return stale.apps().thenCompose(apps -> {
            CompletableFuture<Long> staleTotal = CompletableFuture.completedFuture(0L);
            for (String appId : apps) {
                staleTotal = staleTotal.thenCompose(sum -> removeAll(appId).thenCompose(removed -> stale.count(appId))
                        .thenApply(count -> sum + count));
            }
            return staleTotal.thenAccept(metrics::staleNow);
        });
    }

    /** One app's expired devices, page by page until a page comes back short. */
    private CompletableFuture<Long> removeAll(String appId) {
        return stale.removeExpired(appId, config.pageSize()).thenCompose(removed -> {
            metrics.removed(removed);
            if (removed > 0) {
                log.info("token sweep removed {} devices of app {} unrefreshed past herald.tokens.remove-after", removed, appId);
            }
            return removed < config.pageSize() ? CompletableFuture.completedFuture(removed)
                    : removeAll(appId).thenApply(more -> removed + more);
        });
    }
}
