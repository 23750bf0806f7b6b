package dev.herald.store.mqtt;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Which connection-manager node holds an MQTT device, in Redis: {@code cm:session:{<app>/<device>}}
 * = {@code <node>|<connection>} (in the device's slot, beside its box), and when its last CONNECT was
 * accepted ({@code cm:connected:{<app>/<device>}}). The gateway routes a boxed message to the node
 * holding the device while that node's lease lives ({@link ReplicaLeases}, renewed by the node). A
 * session is deleted only by the connection that wrote it, so a late disconnect never erases a newer
 * session.
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
    private final ReplicaLeases leases;
    private final Clock clock;

    public DeviceSessions(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, ReplicaLeases leases,
                          Clock clock) {
        this.redis = redis;
        this.functions = functions;
        this.leases = leases;
        this.clock = clock;
    }

    /** What a claim found: granted with the holder it replaced (empty if none), or refused (revoked). */
    public record Claim(boolean granted, Optional<Holder> replaced) {
    }

    /**
     * Makes {@code holder} the device's session if {@code generation} (that of the password the
     * device presented) is still the device's credential generation; otherwise refuses: the
     * password was revoked ({@link CredentialGenerations}). A granted claim also records the time
     * of the CONNECT ({@link #presence}).
     */
    public CompletableFuture<Claim> claim(String appId, String deviceId, Holder holder, long generation) {
        return functions.<List<Object>>call(Function.SESSION_CLAIM, ScriptOutputType.MULTI,
                        new String[] {RedisKeys.mqttCredentials(appId, deviceId), RedisKeys.mqttSession(appId, deviceId),
                                RedisKeys.mqttConnected(appId, deviceId)},
                        holder.encode(), Long.toString(generation), Long.toString(clock.millis()))
                .thenApply(answer -> new Claim(((Long) answer.get(0)) == 1, Holder.parse((String) answer.get(1))));
    }

    /** Forgets the device's session if {@code holder} still holds it. */
    public CompletableFuture<Void> release(String appId, String deviceId, Holder holder) {
        return functions.ask(Function.DELETE_IF_EQUAL, new String[] {RedisKeys.mqttSession(appId, deviceId)}, holder.encode())
                .thenApply(ignored -> null);
    }

    /** What the connection manager last knew of a device: its last accepted CONNECT, and whether it holds a live session now. */
    public record Presence(Optional<Instant> lastConnect, boolean connected) {
    }

    public CompletableFuture<Presence> presence(String appId, String deviceId) {
        // One MGET (both keys in the device's slot): read apart, a CONNECT landing between the two
        // reads showed the device connected without its last connect.
        return redis.mget(RedisKeys.mqttConnected(appId, deviceId), RedisKeys.mqttSession(appId, deviceId))
                .toCompletableFuture()
                .thenCompose(values -> {
                    Optional<Instant> lastConnect = Optional.ofNullable(values.get(0).getValueOrElse(null))
                            .map(ms -> Instant.ofEpochMilli(Long.parseLong(ms)));
                    return liveNode(values.get(1).getValueOrElse(null))
                            .thenApply(node -> new Presence(lastConnect, node.isPresent()));
                });
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
        return leases.isLive(Service.CONNECTION_MANAGER, node).thenApply(alive -> alive ? Optional.of(node) : Optional.empty());
    }
}
