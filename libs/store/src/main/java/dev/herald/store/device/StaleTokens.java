package dev.herald.store.device;

import dev.herald.store.StoreProperties;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Firebase's token guidance, applied to the registry: a token not refreshed (re-registered) for
 * {@code staleAfter} is stale, and one not refreshed for {@code removeAfter} is removed with its
 * device. The index {@code devseen:{<app>}} orders an app's devices by last refresh, so the stale
 * ones are a range of it: listed page by page, counted, and swept from the oldest.
 */
public final class StaleTokens {
    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final Clock clock;
    private final StoreProperties.Tokens lifecycle;

    public StaleTokens(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, Clock clock,
                       StoreProperties.Tokens lifecycle) {
        this.redis = redis;
        this.functions = functions;
        this.clock = clock;
        this.lifecycle = lifecycle;
    }

    /** A stale device and when it last registered. */
    public record StaleDevice(String deviceId, Instant refreshedAt) {
    }

    /** One page of stale devices, oldest first; {@code next} is the cursor of the next page, or null after the last. */
    public record Page(List<StaleDevice> devices, String next) {
        public Page {
            devices = List.copyOf(devices);
        }
    }

    /**
     * A page of the app's stale devices after {@code cursor} (null for the first page). The cursor
     * names the last device returned (its refresh time and id), not an offset, so devices removed or
     * refreshed between pages do not shift the pages.
     */
    public CompletableFuture<Page> page(String appId, String cursor, int limit) {
        Cursor after = Cursor.parse(cursor);
        double newest = clock.millis() - lifecycle.staleAfter().toMillis() - 1;
        return collect(appId, after, newest, limit, 0, new ArrayList<>());
    }

    private CompletableFuture<Page> collect(String appId, Cursor after, double newest, int limit, long offset, List<StaleDevice> found) {
        int chunk = limit + 1;
        return redis.zrangebyscoreWithScores(RedisKeys.deviceRefreshed(appId), Range.create((double) after.millis(), newest),
                        Limit.create(offset, chunk)).toCompletableFuture()
                .thenCompose(values -> {
                    for (ScoredValue<String> value : values) {
                        long millis = (long) value.getScore();
                        // Equal times are ordered by id: those up to the cursor's were on an earlier page.
                        if (millis == after.millis() && after.deviceId() != null && value.getValue().compareTo(after.deviceId()) <= 0) {
                            continue;
                        }
                        found.add(new StaleDevice(value.getValue(), Instant.ofEpochMilli(millis)));
                    }
                    if (found.size() > limit) {
                        List<StaleDevice> page = found.subList(0, limit);
                        StaleDevice last = page.getLast();
                        return CompletableFuture.completedFuture(new Page(page, last.refreshedAt().toEpochMilli() + ":" + last.deviceId()));
                    }
                    if (values.size() < chunk) {
                        return CompletableFuture.completedFuture(new Page(found, null));
                    }
                    return collect(appId, after, newest, limit, offset + chunk, found);
                });
    }

    private record Cursor(long millis, String deviceId) {
        static Cursor parse(String cursor) {
            if (cursor == null) {
                return new Cursor(0, null);
            }
            int colon = cursor.indexOf(':');
            try {
                return new Cursor(Long.parseLong(cursor.substring(0, colon)), cursor.substring(colon + 1));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("not a stale-device cursor: " + cursor, e);
            }
        }
    }

    /** How many of the app's devices are stale now. */
    public CompletableFuture<Long> count(String appId) {
        return redis.zcount(RedisKeys.deviceRefreshed(appId),
                Range.create(Double.NEGATIVE_INFINITY, (double) (clock.millis() - lifecycle.staleAfter().toMillis() - 1)))
                .toCompletableFuture();
    }

    /** The apps that registered devices: what the sweep walks. */
    public CompletableFuture<Set<String>> apps() {
        return redis.smembers(RedisKeys.deviceApps()).toCompletableFuture();
    }

    /**
     * Removes up to {@code max} of the app's devices not refreshed for {@code removeAfter}, oldest
     * first, each unless it registered again meanwhile; each removal is counted in the app's
     * statistics in the same step. Returns how many were removed.
     */
    public CompletableFuture<Long> removeExpired(String appId, int max) {
        long cutoff = clock.millis() - lifecycle.removeAfter().toMillis();
        return redis.zrangebyscore(RedisKeys.deviceRefreshed(appId), Range.create(Double.NEGATIVE_INFINITY, (double) cutoff),
                        Limit.create(0, max)).toCompletableFuture()
                .thenCompose(deviceIds -> {
                    List<CompletableFuture<Boolean>> removals = deviceIds.stream().map(deviceId -> {
                        String[] keys = DeviceRegistry.deviceKeys(appId, deviceId);
                        return functions.ask(Function.DEVICE_REMOVE_STALE,
                                new String[] {keys[0], keys[1], keys[2], RedisKeys.appStats(appId)},
                                RedisKeys.tokenPrefix(appId), RedisKeys.topicPrefix(appId), deviceId, String.valueOf(cutoff));
                    }).toList();
                    return CompletableFuture.allOf(removals.toArray(CompletableFuture[]::new))
                            .thenApply(done -> removals.stream().filter(CompletableFuture::join).count());
                });
    }
}
