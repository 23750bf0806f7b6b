package dev.herald.store.device;

import dev.herald.contract.Channel;
import dev.herald.contract.Target;
import dev.herald.store.redis.RedisScript;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Devices and topic membership in Redis:
 * {@code dev:<app>:<device>} (channel, token), {@code devtopics:<app>:<device>} (its topics),
 * {@code topic:<app>:<topic>} (device ids) and {@code tok:<app>:<channel>:<token>} (device id, so a
 * token the provider reports dead can be removed). Lua scripts keep the four in step.
 */
public final class DeviceRegistry {
    private final RedisAsyncCommands<String, String> redis;
    private final RedisScript register;
    private final RedisScript remove;
    private final RedisScript topic;

    public DeviceRegistry(RedisAsyncCommands<String, String> redis) {
        this.redis = redis;
        this.register = RedisScript.fromClasspath("/dev/herald/store/lua/device_register.lua", ScriptOutputType.INTEGER, redis);
        this.remove = RedisScript.fromClasspath("/dev/herald/store/lua/device_remove.lua", ScriptOutputType.INTEGER, redis);
        this.topic = RedisScript.fromClasspath("/dev/herald/store/lua/device_topic.lua", ScriptOutputType.INTEGER, redis);
    }

    /** Registers or replaces a device; true when it is new. */
    public CompletableFuture<Boolean> register(String appId, String deviceId, Channel channel, String token, Iterable<String> topics) {
        List<String> args = new ArrayList<>(List.of(appId, deviceId, channel.name(), token,
                String.valueOf(Instant.now().toEpochMilli())));
        topics.forEach(args::add);
        return register.<Long>run(redis, new String[0], args.toArray(String[]::new)).thenApply(created -> created == 1);
    }

    public CompletableFuture<Boolean> unregister(String appId, String deviceId) {
        return remove.<Long>run(redis, new String[0], appId, deviceId, "", "").thenApply(removed -> removed == 1);
    }

    /** Removes the device holding this token, if it still holds it. True when a device was removed. */
    public CompletableFuture<Boolean> removeToken(String appId, Channel channel, String token) {
        return remove.<Long>run(redis, new String[0], appId, "", channel.name(), token).thenApply(removed -> removed == 1);
    }

    /** False when the device is not registered. */
    public CompletableFuture<Boolean> subscribe(String appId, String deviceId, String topicName) {
        return topic.<Long>run(redis, new String[0], appId, deviceId, topicName, "sub").thenApply(ok -> ok == 1);
    }

    /** False when the device is not registered. */
    public CompletableFuture<Boolean> unsubscribe(String appId, String deviceId, String topicName) {
        return topic.<Long>run(redis, new String[0], appId, deviceId, topicName, "unsub").thenApply(ok -> ok == 1);
    }

    public CompletableFuture<Optional<Device>> find(String appId, String deviceId) {
        CompletableFuture<Map<String, String>> fields = redis.hgetall("dev:" + appId + ":" + deviceId).toCompletableFuture();
        CompletableFuture<java.util.Set<String>> topics = redis.smembers("devtopics:" + appId + ":" + deviceId).toCompletableFuture();
        return fields.thenCombine(topics, (hash, names) -> hash.isEmpty() ? Optional.<Device>empty()
                : Optional.of(new Device(appId, deviceId, Channel.valueOf(hash.get("channel")), hash.get("token"),
                        new HashSet<>(names), Instant.ofEpochMilli(Long.parseLong(hash.getOrDefault("updatedAt", "0"))))));
    }

    /** One page of a topic's subscribers, starting at {@code cursor} ("0" for the first page). */
    public CompletableFuture<TopicPage> topicPage(String appId, String topicName, String cursor, int pageSize) {
        return redis.sscan("topic:" + appId + ":" + topicName, ScanCursor.of(cursor), ScanArgs.Builder.limit(pageSize))
                .toCompletableFuture()
                .thenApply(page -> new TopicPage(page.getValues(), page.isFinished() ? "0" : page.getCursor()));
    }

    /** Targets of the given devices; unknown devices are left out. The look-ups are pipelined. */
    public CompletableFuture<List<Target>> resolve(String appId, List<String> deviceIds) {
        List<RedisFuture<List<KeyValue<String, String>>>> lookups = new ArrayList<>(deviceIds.size());
        for (String deviceId : deviceIds) {
            lookups.add(redis.hmget("dev:" + appId + ":" + deviceId, "channel", "token"));
        }
        return CompletableFuture.allOf(lookups.stream().map(RedisFuture::toCompletableFuture).toArray(CompletableFuture[]::new))
                .thenApply(ignored -> {
                    List<Target> targets = new ArrayList<>(deviceIds.size());
                    for (int i = 0; i < deviceIds.size(); i++) {
                        List<KeyValue<String, String>> values = lookups.get(i).toCompletableFuture().join();
                        if (values.get(0).hasValue() && values.get(1).hasValue()) {
                            targets.add(new Target(Channel.valueOf(values.get(0).getValue()), values.get(1).getValue(), deviceIds.get(i)));
                        }
                    }
                    return targets;
                });
    }
}
