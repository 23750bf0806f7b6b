package dev.herald.store.replica;

import dev.herald.store.keys.RedisKeys;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import tools.jackson.databind.json.JsonMapper;

/**
 * Each running replica's lease, {@code replica:<service>:<replica>} = the {@link Replica} as JSON,
 * written in one {@code SET ... PX} so a lease never lives without its TTL. A replica renews it well
 * within the TTL and deletes it when it stops gracefully; one that dies is gone when the TTL lapses.
 * The one record of which replicas of the gateway and the connection manager live: the admin's
 * platform view lists them, and the gateway routes MQTT deliveries only to a connection-manager node
 * whose lease lives ({@link #isLive}).
 */
public final class ReplicaLeases {
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final RedisClusterAsyncCommands<String, String> redis;

    public ReplicaLeases(RedisClusterAsyncCommands<String, String> redis) {
        this.redis = redis;
    }

    /** Writes or renews the replica's lease for {@code ttl}. */
    public CompletableFuture<Void> renew(Service service, Replica replica, Duration ttl) {
        return redis.set(RedisKeys.replicaLease(service.id(), replica.id()), JSON.writeValueAsString(replica),
                        SetArgs.Builder.px(ttl.toMillis()))
                .toCompletableFuture().thenApply(ignored -> null);
    }

    /** The replica stops: it is gone at once rather than when its lease lapses. */
    public CompletableFuture<Void> drop(Service service, String replicaId) {
        return redis.del(RedisKeys.replicaLease(service.id(), replicaId)).toCompletableFuture().thenApply(ignored -> null);
    }

    public CompletableFuture<Boolean> isLive(Service service, String replicaId) {
        return redis.exists(RedisKeys.replicaLease(service.id(), replicaId)).toCompletableFuture().thenApply(found -> found == 1);
    }

    /**
     * The service's live replicas, oldest first. A SCAN over the keyspace (every master of a
     * cluster): for the admin's occasional look, never a hot path.
     */
    public CompletableFuture<List<Replica>> live(Service service) {
        List<Replica> found = new ArrayList<>();
        return scan(ScanCursor.INITIAL, RedisKeys.replicaLease(service.id(), ""), found).thenApply(done -> {
            synchronized (found) {
                return found.stream().sorted(Comparator.comparing(Replica::startedAt).thenComparing(Replica::id)).toList();
            }
        });
    }

    private CompletableFuture<Void> scan(ScanCursor cursor, String prefix, List<Replica> found) {
        return redis.scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(1000)).toCompletableFuture().thenCompose(page -> {
            CompletableFuture<?>[] reads = page.getKeys().stream().map(key -> redis.get(key).toCompletableFuture()
                    .thenAccept(value -> {
                        if (value != null) {   // lapsed between the SCAN and the GET
                            Replica replica = JSON.readValue(value, Replica.class);
                            synchronized (found) {
                                found.add(replica);
                            }
                        }
                    })).toArray(CompletableFuture[]::new);
            return CompletableFuture.allOf(reads).thenCompose(read -> page.isFinished()
                    ? CompletableFuture.<Void>completedFuture(null) : scan(page, prefix, found));
        });
    }
}
