package dev.herald.store.mqtt;

import dev.herald.contract.Channel;
import dev.herald.store.redis.RedisScript;
import dev.herald.store.status.Outcome;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Every message on its way to an MQTT device waits in that device's box in Redis until the device
 * acknowledges it (PUBACK), expires, or is replaced: the gateway puts it there, the connection
 * manager that holds the device delivers it from there and settles it. Because the box, not a node
 * or a queue, holds the message, a node that dies, a device that moves to another node or a second
 * connection that takes over loses nothing: the next session drains the box in order.
 * Bounded ({@code maxEntries}, oldest evicted), TTL honoured, a collapse key replaces the older entry.
 */
public final class MqttOutbox {
    /** One message in a box: the JSON the device receives, and when it expires (epoch ms). */
    public record Entry(String messageId, String payload, long expiresAt) {
    }

    /**
     * Where a put message stands.
     *
     * @param node      the connection-manager node holding the device live, empty when it is offline
     * @param collapsed ids of older messages the new one replaced (collapse key)
     * @param evicted   ids of the oldest messages pushed out because the box was full
     */
    public record Placement(Optional<String> node, List<String> collapsed, List<String> evicted) {
    }

    private static final String BOX_PREFIX = "cm:box:";
    private static final String EXPIRIES = "cm:expiries";

    private final RedisAsyncCommands<String, String> redis;
    private final int maxEntries;
    private final Duration statusTtl;
    private final RedisScript put;
    private final RedisScript settle;
    private final RedisScript read;
    private final RedisScript reindex;

    public MqttOutbox(RedisAsyncCommands<String, String> redis, int maxEntries, Duration statusTtl) {
        this.redis = redis;
        this.maxEntries = maxEntries;
        this.statusTtl = statusTtl;
        this.put = RedisScript.fromClasspath("/dev/herald/store/lua/box_put.lua", ScriptOutputType.MULTI, redis);
        this.settle = RedisScript.fromClasspath("/dev/herald/store/lua/box_settle.lua", ScriptOutputType.INTEGER, redis);
        this.read = RedisScript.fromClasspath("/dev/herald/store/lua/box_read.lua", ScriptOutputType.MULTI, redis);
        this.reindex = RedisScript.fromClasspath("/dev/herald/store/lua/box_reindex.lua", ScriptOutputType.INTEGER, redis);
    }

    /** Redis hash tag shared by all of one device's keys ({@code /} cannot occur in ids, {@code :} can). */
    private static String tag(String appId, String deviceId) {
        return "{" + appId + "/" + deviceId + "}";
    }

    /** Key naming which node and connection hold the device ({@code <node>|<connection>}). */
    public static String sessionKey(String appId, String deviceId) {
        return "cm:session:" + tag(appId, deviceId);
    }

    /** Key whose presence says the node is alive (its lease, renewed by its heartbeat). */
    public static String nodeLeaseKey(String nodeId) {
        return "cm:node:" + nodeId;
    }

    /** The status-store target key of an MQTT device. */
    public static String targetKey(String deviceId) {
        return Channel.mqtt + ":" + deviceId;
    }

    /** Puts a message into the device's box and says which live node holds the device. */
    public CompletableFuture<Placement> put(String appId, String deviceId, Entry entry, String collapseKey) {
        String tag = tag(appId, deviceId);
        String[] keys = {"cm:box:" + tag, "cm:boxm:" + tag, sessionKey(appId, deviceId), "done:" + entry.messageId()};
        return put.<List<Object>>run(redis, keys, entry.messageId(), entry.payload(), String.valueOf(entry.expiresAt()),
                        collapseKey == null ? "" : collapseKey, String.valueOf(maxEntries), targetKey(deviceId),
                        String.valueOf(System.currentTimeMillis()))
                .thenApply(result -> {
                    String node = (String) result.getFirst();
                    List<String> collapsed = new ArrayList<>();
                    List<String> evicted = new ArrayList<>();
                    for (Object item : result.subList(1, result.size())) {
                        String text = (String) item;
                        (text.startsWith("c:") ? collapsed : evicted).add(text.substring(2));
                    }
                    return new Placement(node.isEmpty() ? Optional.empty() : Optional.of(node), collapsed, evicted);
                });
    }

    /** The device's box in arrival order (expired entries included; the caller settles them). */
    public CompletableFuture<List<Entry>> read(String appId, String deviceId) {
        String tag = tag(appId, deviceId);
        return read.<List<Object>>run(redis, new String[] {"cm:box:" + tag, "cm:boxm:" + tag}).thenApply(flat -> {
            List<Entry> entries = new ArrayList<>(flat.size() / 3);
            for (int i = 0; i + 2 < flat.size(); i += 3) {
                entries.add(new Entry((String) flat.get(i), (String) flat.get(i + 1), Long.parseLong((String) flat.get(i + 2))));
            }
            return entries;
        });
    }

    /**
     * Removes a message from the box and counts its final outcome for this device once.
     * True when this call counted it.
     */
    public CompletableFuture<Boolean> settle(String appId, String deviceId, String messageId, Outcome outcome) {
        String tag = tag(appId, deviceId);
        String[] keys = {"cm:box:" + tag, "cm:boxm:" + tag, "msg:" + messageId, "done:" + messageId, "stats:" + appId};
        return settle.<Long>run(redis, keys, messageId, targetKey(deviceId), outcome.kind().name(),
                        outcome.reason() == null ? "" : outcome.reason(), String.valueOf(System.currentTimeMillis()),
                        String.valueOf(statusTtl.toSeconds()))
                .thenApply(counted -> counted == 1);
    }

    /** A device whose box has an entry that expired (see {@link #due}). */
    public record Box(String appId, String deviceId) {
    }

    /**
     * Boxes holding an entry whose TTL has passed, at most {@code limit}: the expiry sweeper settles
     * those entries {@code expired} even when their device never connects again.
     */
    public CompletableFuture<List<Box>> due(long nowMillis, int limit) {
        return redis.zrangebyscore(EXPIRIES, io.lettuce.core.Range.create(0, nowMillis), io.lettuce.core.Limit.create(0, limit))
                .toCompletableFuture()
                .thenApply(keys -> keys.stream()
                        .filter(key -> key.startsWith(BOX_PREFIX + "{") && key.endsWith("}") && key.indexOf('/') > 0)
                        .map(key -> {
                            String tag = key.substring(BOX_PREFIX.length() + 1, key.length() - 1);
                            int slash = tag.indexOf('/');
                            return new Box(tag.substring(0, slash), tag.substring(slash + 1));
                        })
                        .toList());
    }

    /** After a sweep: the box's next expiry goes into the index, or the box leaves it when empty. */
    public CompletableFuture<Void> reindex(Box box) {
        String tag = tag(box.appId(), box.deviceId());
        return reindex.<Long>run(redis, new String[] {BOX_PREFIX + tag, "cm:boxm:" + tag, EXPIRIES}).thenApply(ignored -> null);
    }

    /** Entries in the device's box (metrics, tests). */
    public CompletableFuture<Long> size(String appId, String deviceId) {
        return redis.zcard("cm:box:" + tag(appId, deviceId)).toCompletableFuture();
    }
}
