package dev.herald.store.mqtt;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.store.status.Outcome;
import dev.herald.store.status.Recording;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.ZAddArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Every message on its way to an MQTT device waits in that device's box in Redis until the device
 * acknowledges it (PUBACK), expires, or is replaced: the gateway puts it there, the connection
 * manager that holds the device delivers it from there and settles it. Because the box, not a node
 * or a queue, holds the message, a node that dies, a device that moves to another node or a second
 * connection that takes over loses nothing: the next session drains the box in order.
 * Bounded ({@code maxEntries}, oldest evicted), TTL honoured, a collapse key replaces the older entry.
 *
 * <p>The box and the device's session share the device's hash slot; the message's status, the
 * expiry index and node leases live elsewhere, so a put and a settle are steps ordered so that a
 * crash between them at worst delivers a message twice (QoS 1 allows it), never counts it twice and
 * never leaves a boxed entry that the expiry sweeper cannot find.
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

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final MessageStatusStore status;
    private final MessageCancels cancels;
    private final DeviceSessions sessions;
    private final int maxEntries;
    private final Clock clock;

    public MqttOutbox(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, MessageStatusStore status,
                      MessageCancels cancels, DeviceSessions sessions, int maxEntries, Clock clock) {
        this.redis = redis;
        this.functions = functions;
        this.status = status;
        this.cancels = cancels;
        this.sessions = sessions;
        this.maxEntries = maxEntries;
        this.clock = clock;
    }

    private static String[] boxKeys(String appId, String deviceId) {
        return new String[] {RedisKeys.mqttBox(appId, deviceId), RedisKeys.mqttBoxEntries(appId, deviceId)};
    }

    /**
     * Puts a message into the device's box and says which live node holds the device. Putting again
     * a message that is in the box or already settled for this device changes nothing (a redelivered
     * gateway batch).
     */
    public CompletableFuture<Placement> put(String appId, String deviceId, Entry entry, String collapseKey) {
        return status.settled(entry.messageId(), MqttAddresses.targetKey(deviceId)).thenCompose(settled -> settled
                ? sessions.liveNode(appId, deviceId).thenApply(node -> new Placement(node, List.of(), List.of()))
                : boxed(appId, deviceId, entry, collapseKey));
    }

    /**
     * As {@link #put}, for a message accepted a moment ago (the dispatcher's direct send): none of
     * its targets can have been settled yet, so the look-up {@code put} starts with is left out.
     */
    public CompletableFuture<Placement> putNew(String appId, String deviceId, Entry entry, String collapseKey) {
        return boxed(appId, deviceId, entry, collapseKey);
    }

    private CompletableFuture<Placement> boxed(String appId, String deviceId, Entry entry, String collapseKey) {
        String[] keys = {RedisKeys.mqttBox(appId, deviceId), RedisKeys.mqttBoxEntries(appId, deviceId),
                RedisKeys.mqttSession(appId, deviceId)};
        return functions.<List<Object>>call(Function.BOX_PUT, ScriptOutputType.MULTI, keys, entry.messageId(), entry.payload(),
                        String.valueOf(entry.expiresAt()), collapseKey == null ? "" : collapseKey,
                        String.valueOf(maxEntries), String.valueOf(clock.millis()))
                // After the entry is in the box, so a concurrent reindex that missed it sees this (see
                // reindex); the node's lease is read in the same round trip.
                .thenCompose(result -> index(keys[0], entry.expiresAt())
                        .thenCombine(sessions.liveNode((String) result.getFirst()), (indexed, node) -> {
                            List<String> collapsed = new ArrayList<>();
                            List<String> evicted = new ArrayList<>();
                            for (Object item : result.subList(1, result.size())) {
                                String text = (String) item;
                                (text.startsWith("c:") ? collapsed : evicted).add(text.substring(2));
                            }
                            return new Placement(node, collapsed, evicted);
                        }));
    }

    /** Lowers the box's score in the expiry index to {@code expiresAt} (adds it when absent). */
    private CompletableFuture<Long> index(String boxKey, long expiresAt) {
        return redis.zadd(RedisKeys.mqttExpiries(), ZAddArgs.Builder.lt(), expiresAt, boxKey).toCompletableFuture();
    }

    /** The device's box in arrival order (expired entries included; the caller settles them). */
    public CompletableFuture<List<Entry>> read(String appId, String deviceId) {
        return functions.<List<Object>>call(Function.BOX_READ, ScriptOutputType.MULTI, boxKeys(appId, deviceId)).thenApply(flat -> {
            List<Entry> entries = new ArrayList<>(flat.size() / 3);
            for (int i = 0; i + 2 < flat.size(); i += 3) {
                entries.add(new Entry((String) flat.get(i), (String) flat.get(i + 1), Long.parseLong((String) flat.get(i + 2))));
            }
            return entries;
        });
    }

    /**
     * The box as a (re)connecting device should get it: entries of cancelled messages are settled as
     * {@code cancelled} and leave the box instead. Checked here, where entries have waited for an
     * offline device, not on the live path, where a message reaches a connected device at once (one
     * look-up per entry, sent together).
     */
    public CompletableFuture<List<Entry>> readForDelivery(String appId, String deviceId) {
        return read(appId, deviceId).thenCompose(entries -> {
            List<CompletableFuture<Boolean>> marks = entries.stream().map(entry -> cancels.cancelled(entry.messageId())).toList();
            return CompletableFuture.allOf(marks.toArray(CompletableFuture[]::new)).thenCompose(checked -> {
                List<Entry> live = new ArrayList<>(entries.size());
                List<CompletableFuture<Boolean>> settled = new ArrayList<>();
                for (int i = 0; i < entries.size(); i++) {
                    if (marks.get(i).join()) {
                        settled.add(settle(appId, deviceId, entries.get(i).messageId(), Outcome.cancelled()));
                    } else {
                        live.add(entries.get(i));
                    }
                }
                return CompletableFuture.allOf(settled.toArray(CompletableFuture[]::new)).thenApply(done -> live);
            });
        });
    }

    /**
     * Counts the message's final outcome for this device once, then removes it from the box (a crash
     * between the two leaves the entry to be delivered and settled again: counted once all the same).
     * True when this call counted it.
     */
    public CompletableFuture<Boolean> settle(String appId, String deviceId, String messageId, Outcome outcome) {
        return status.settle(messageId, appId, MqttAddresses.targetKey(deviceId), outcome)
                .thenCompose(recording -> withdraw(appId, deviceId, messageId)
                        .thenApply(removed -> recording == Recording.RECORDED));
    }

    /**
     * Takes a message out of the box without settling it: a hand-off whose send was then refused
     * (the client got an error and will send again), so only the client's retry stays. A message
     * that is not there (never put, or settled meanwhile) is no error.
     */
    public CompletableFuture<Void> withdraw(String appId, String deviceId, String messageId) {
        return functions.<Long>call(Function.BOX_REMOVE, ScriptOutputType.INTEGER, boxKeys(appId, deviceId), messageId)
                .thenApply(removed -> null);
    }

    /** A device whose box has an entry that expired (see {@link #due}). */
    public record Box(String appId, String deviceId) {
    }

    /**
     * Boxes holding an entry whose TTL has passed, at most {@code limit}: the expiry sweeper settles
     * those entries {@code expired} even when their device never connects again.
     */
    public CompletableFuture<List<Box>> due(long nowMillis, int limit) {
        return redis.zrangebyscore(RedisKeys.mqttExpiries(), Range.create(0, nowMillis), Limit.create(0, limit))
                .toCompletableFuture()
                .thenApply(keys -> keys.stream()
                        .map(RedisKeys::mqttBoxOwner)
                        .filter(Objects::nonNull)
                        .map(owner -> new Box(owner[0], owner[1]))
                        .toList());
    }

    /**
     * After a sweep: the box's next expiry goes into the index, or the box leaves it when empty.
     * The box and the index are in different slots, so a put may land between reading the box and
     * writing the index; reading the box once more afterwards, and lowering the score to what it
     * holds, keeps that put's entry indexed (a put indexes only after its entry is in the box).
     */
    public CompletableFuture<Void> reindex(Box box) {
        String boxKey = RedisKeys.mqttBox(box.appId(), box.deviceId());
        return earliest(box).thenCompose(earliest -> earliest == null
                        ? redis.zrem(RedisKeys.mqttExpiries(), boxKey).toCompletableFuture()
                        : redis.zadd(RedisKeys.mqttExpiries(), earliest, boxKey).toCompletableFuture())
                .thenCompose(written -> earliest(box))
                .thenCompose(again -> again == null ? CompletableFuture.completedFuture(0L) : index(boxKey, again))
                .thenApply(ignored -> null);
    }

    private CompletableFuture<Long> earliest(Box box) {
        return functions.call(Function.BOX_EARLIEST, ScriptOutputType.INTEGER, boxKeys(box.appId(), box.deviceId()));
    }

    /** Entries in the device's box (metrics, tests). */
    public CompletableFuture<Long> size(String appId, String deviceId) {
        return redis.zcard(RedisKeys.mqttBox(appId, deviceId)).toCompletableFuture();
    }
}
