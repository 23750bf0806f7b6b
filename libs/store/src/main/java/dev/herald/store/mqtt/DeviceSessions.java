package dev.herald.store.mqtt;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Which connection-manager node holds an MQTT device, in Redis: {@code cm:session:{<app>/<device>}}
 * = {@code <node>|<connection>} (in the device's slot, beside its box), and each node's lease
 * {@code cm:node:<node>}, renewed by its heartbeat. The gateway routes a boxed message to the node
 * holding the device while that node's lease lives. A session is deleted only by the connection that
 * wrote it, so a late disconnect never erases a newer session.
 */
public final class DeviceSessions {
    /** Who holds a device: a node and one of its connections. */
    public record Holder(String nodeId, String connectionId) {
        public static Optional<Holder> parse(String value) {
            if (value == null || value.isEmpty()) {
                return Optional.empty();
            }
            String[] parts = value.split("\\|", 2);
            return Optional.of(new Holder(parts[0], parts.length > 1 ? parts[1] : ""));
        }

        String encode() {
            return nodeId + "|" + connectionId;
        }
    }

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;

    public DeviceSessions(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions) {
        this.redis = redis;
        this.functions = functions;
    }

    /** What a claim found: granted with the holder it replaced (empty if none), or refused (revoked). */
    public record Claim(boolean granted, Optional<Holder> replaced) {
    }

    /**
     * Makes {@code holder} the device's session if {@code generation} (that of the password the
     * device presented) is still the device's credential generation; otherwise refuses: the
     * password was revoked ({@link CredentialGenerations}).
     */
    public CompletableFuture<Claim> claim(String appId, String deviceId, Holder holder, long generation) {
        return functions.<List<Object>>call(Function.SESSION_CLAIM, ScriptOutputType.MULTI,
                        new String[] {RedisKeys.mqttCredentials(appId, deviceId), RedisKeys.mqttSession(appId, deviceId)},
                        holder.encode(), Long.toString(generation))
                .thenApply(answer -> new Claim(((Long) answer.get(0)) == 1, Holder.parse((String) answer.get(1))));
    }

    /** Forgets the device's session if {@code holder} still holds it. */
    public CompletableFuture<Void> release(String appId, String deviceId, Holder holder) {
        return functions.ask(Function.DELETE_IF_EQUAL, new String[] {RedisKeys.mqttSession(appId, deviceId)}, holder.encode())
                .thenApply(ignored -> null);
    }

    /**
     * Renews the node's lease. Its value is the node's count of open device connections, what the
     * console's platform view adds up ({@link #nodes}).
     */
    public CompletableFuture<Void> heartbeat(String nodeId, Duration lease, int connections) {
        return redis.set(RedisKeys.mqttNodeLease(nodeId), String.valueOf(connections), SetArgs.Builder.px(lease.toMillis()))
                .toCompletableFuture().thenApply(ignored -> null);
    }

    /**
     * The live connection-manager nodes and their open connections at their last heartbeat. A SCAN
     * over the keyspace (every master of a cluster): for the admin's occasional look, never a hot path.
     */
    public CompletableFuture<SortedMap<String, Integer>> nodes() {
        SortedMap<String, Integer> nodes = new TreeMap<>();
        return scanNodes(ScanCursor.INITIAL, nodes).thenApply(done -> nodes);
    }

    private CompletableFuture<Void> scanNodes(ScanCursor cursor, SortedMap<String, Integer> nodes) {
        String prefix = RedisKeys.mqttNodeLease("");
        ScanArgs match = ScanArgs.Builder.matches(prefix + "*").limit(1000);
        return redis.scan(cursor, match).toCompletableFuture().thenCompose(page -> {
            List<String> keys = page.getKeys();
            CompletableFuture<?>[] reads = keys.stream().map(key -> redis.get(key).toCompletableFuture()
                    .thenAccept(value -> {
                        if (value != null) {
                            synchronized (nodes) {
                                nodes.put(key.substring(prefix.length()), parseCount(value));
                            }
                        }
                    })).toArray(CompletableFuture[]::new);
            return CompletableFuture.allOf(reads).thenCompose(read -> page.isFinished()
                    ? CompletableFuture.<Void>completedFuture(null) : scanNodes(page, nodes));
        });
    }

    /** A lease written before leases carried a count reads "1": its count is not known, shown as 0. */
    private static int parseCount(String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException unknown) {
            return 0;
        }
    }

    /** The node stops: no more routing to it, at once rather than when the lease lapses. */
    public CompletableFuture<Void> dropLease(String nodeId) {
        return redis.del(RedisKeys.mqttNodeLease(nodeId)).toCompletableFuture().thenApply(ignored -> null);
    }

    /** The node holding the device, if that node's lease lives. */
    CompletableFuture<Optional<String>> liveNode(String appId, String deviceId) {
        return redis.get(RedisKeys.mqttSession(appId, deviceId)).toCompletableFuture().thenCompose(this::liveNode);
    }

    /** The node of a session value read with the box, if that node's lease lives. */
    CompletableFuture<Optional<String>> liveNode(String sessionValue) {
        Optional<Holder> holder = Holder.parse(sessionValue);
        if (holder.isEmpty()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        String node = holder.get().nodeId();
        return redis.exists(RedisKeys.mqttNodeLease(node)).toCompletableFuture()
                .thenApply(alive -> alive == 1 ? Optional.of(node) : Optional.empty());
    }
}
