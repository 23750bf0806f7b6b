package dev.herald.store.device;

import dev.herald.contract.Channel;
import dev.herald.contract.Target;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Devices and topic membership in Redis:
 * {@code dev:{<app>}:<device>} (channel, token), {@code devtopics:{<app>}:<device>} (its topics),
 * {@code topic:{<app>}:<topic>} (device ids) and {@code tok:{<app>}:<channel>:<token>} (device id, so
 * a token the provider reports dead can be removed) and {@code devseen:{<app>}} (device -> when it
 * last registered, which is how a token is refreshed). The five share the app's hash tag, so the
 * library's device functions keep them in step in one atomic step, on Redis Cluster too.
 *
 * <p>A device whose last registration is older than {@code staleAfter} is stale: audiences leave it
 * out ({@link #resolve}) and the token sweep removes it later ({@link StaleTokens}). Staleness is
 * derived from that one time, never stored as a flag that could disagree with it.
 */
public final class DeviceRegistry {
    /** Devices read per device_read call. */
    static final int DEVICES_PER_READ = 1000;
    /** What a look-up reads of each device, in this order. */
    private static final String[] READ_FIELDS = {"channel", "token", "updatedAt", "timeZone"};

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final Clock clock;
    private final Duration staleAfter;

    public DeviceRegistry(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, Clock clock,
                          Duration staleAfter) {
        this.redis = redis;
        this.functions = functions;
        this.clock = clock;
        this.staleAfter = staleAfter;
    }

    static String[] deviceKeys(String appId, String deviceId) {
        return new String[] {RedisKeys.device(appId, deviceId), RedisKeys.deviceTopics(appId, deviceId),
                RedisKeys.deviceRefreshed(appId)};
    }

    /** Registrations before this are stale. */
    private long staleBefore() {
        return clock.millis() - staleAfter.toMillis();
    }

    private CompletableFuture<Boolean> call(Function function, String[] keys, List<String> args) {
        return functions.ask(function, keys, args.toArray(String[]::new));
    }

    /** Registers or replaces a device; true when it is new. */
    public CompletableFuture<Boolean> register(String appId, String deviceId, Channel channel, String token, Iterable<String> topics) {
        List<String> args = new ArrayList<>(List.of(RedisKeys.tokenPrefix(appId), RedisKeys.topicPrefix(appId), deviceId,
                channel.name(), token, String.valueOf(clock.millis())));
        topics.forEach(args::add);
        // The sweep's list of apps (its own slot, so not part of the registration's step; sent back
        // to back with it, so no extra wait).
        CompletableFuture<Long> listed = redis.sadd(RedisKeys.deviceApps(), appId).toCompletableFuture();
        return call(Function.DEVICE_REGISTER, deviceKeys(appId, deviceId), args).thenCombine(listed, (created, ignored) -> created);
    }

    /**
     * Registers a batch of one app's devices in one call (they share the app's hash tag), each
     * replaced as {@link #register} and {@link #setTimeZone} would; how many of them are new. The
     * batch is one atomic step: a re-run of the same batch leaves the same devices.
     */
    public CompletableFuture<Long> registerAll(String appId, List<Registration> batch) {
        if (batch.isEmpty()) {
            return CompletableFuture.completedFuture(0L);
        }
        List<String> args = new ArrayList<>(5 + batch.size() * 6);
        args.addAll(List.of(RedisKeys.tokenPrefix(appId), RedisKeys.topicPrefix(appId), RedisKeys.devicePrefix(appId),
                RedisKeys.deviceTopicsPrefix(appId), String.valueOf(clock.millis())));
        for (Registration device : batch) {
            args.addAll(List.of(device.deviceId(), device.channel().name(), device.token(), device.timeZone().orElse(""),
                    String.valueOf(device.topics().size())));
            args.addAll(device.topics());
        }
        CompletableFuture<Long> listed = redis.sadd(RedisKeys.deviceApps(), appId).toCompletableFuture();
        return functions.<Long>call(Function.DEVICE_IMPORT, ScriptOutputType.INTEGER,
                        new String[] {RedisKeys.deviceRefreshed(appId)}, args.toArray(String[]::new))
                .thenCombine(listed, (created, ignored) -> created);
    }

    public CompletableFuture<Boolean> unregister(String appId, String deviceId) {
        return call(Function.DEVICE_REMOVE, deviceKeys(appId, deviceId),
                List.of(RedisKeys.tokenPrefix(appId), RedisKeys.topicPrefix(appId), deviceId));
    }

    /** Removes the device holding this token, if it still holds it. True when a device was removed. */
    public CompletableFuture<Boolean> removeToken(String appId, Channel channel, String token) {
        return redis.get(RedisKeys.token(appId, channel.name(), token)).toCompletableFuture().thenCompose(deviceId -> deviceId == null
                ? CompletableFuture.completedFuture(false)
                : call(Function.DEVICE_REMOVE, deviceKeys(appId, deviceId),
                        List.of(RedisKeys.tokenPrefix(appId), RedisKeys.topicPrefix(appId), deviceId, channel.name(), token)));
    }

    /** False when the device is not registered. */
    public CompletableFuture<Boolean> subscribe(String appId, String deviceId, String topicName) {
        return topic(appId, deviceId, topicName, "sub");
    }

    /** False when the device is not registered. */
    public CompletableFuture<Boolean> unsubscribe(String appId, String deviceId, String topicName) {
        return topic(appId, deviceId, topicName, "unsub");
    }

    private CompletableFuture<Boolean> topic(String appId, String deviceId, String topicName, String op) {
        String[] keys = {RedisKeys.device(appId, deviceId), RedisKeys.deviceTopics(appId, deviceId), RedisKeys.topic(appId, topicName)};
        return call(Function.DEVICE_TOPIC, keys, List.of(deviceId, topicName, op));
    }

    public CompletableFuture<Optional<Device>> find(String appId, String deviceId) {
        CompletableFuture<Map<String, String>> fields = redis.hgetall(RedisKeys.device(appId, deviceId)).toCompletableFuture();
        CompletableFuture<java.util.Set<String>> topics = redis.smembers(RedisKeys.deviceTopics(appId, deviceId)).toCompletableFuture();
        return fields.thenCombine(topics, (hash, names) -> hash.isEmpty() ? Optional.<Device>empty()
                : Optional.of(device(appId, deviceId, hash, names)));
    }

    private Device device(String appId, String deviceId, Map<String, String> hash, java.util.Set<String> names) {
        long updatedAt = Long.parseLong(hash.getOrDefault("updatedAt", "0"));
        return new Device(appId, deviceId, Channel.valueOf(hash.get("channel")), hash.get("token"), new HashSet<>(names),
                Instant.ofEpochMilli(updatedAt), updatedAt < staleBefore(), Optional.ofNullable(hash.get("timeZone")));
    }

    /** The device that holds a token of a channel (the token index), if any. */
    public CompletableFuture<Optional<String>> deviceOfToken(String appId, Channel channel, String token) {
        return redis.get(RedisKeys.token(appId, channel.name(), token)).toCompletableFuture().thenApply(Optional::ofNullable);
    }

    /** How many devices a topic has now (what a send spread over minutes divides by). */
    public CompletableFuture<Long> topicSize(String appId, String topicName) {
        return redis.scard(RedisKeys.topic(appId, topicName)).toCompletableFuture();
    }

    /** One page of a topic's subscribers, starting at {@code cursor} ("0" for the first page). */
    public CompletableFuture<TopicPage> topicPage(String appId, String topicName, String cursor, int pageSize) {
        return redis.sscan(RedisKeys.topic(appId, topicName), ScanCursor.of(cursor), ScanArgs.Builder.limit(pageSize))
                .toCompletableFuture()
                .thenApply(page -> new TopicPage(page.getValues(), page.isFinished() ? "0" : page.getCursor()));
    }

    /**
     * Sets ({@code timeZone} present) or clears a registered device's IANA time zone. A separate step
     * after {@link #register}: a registration that dies between the two keeps the device's previous zone.
     * False when the device is not registered.
     */
    public CompletableFuture<Boolean> setTimeZone(String appId, String deviceId, Optional<String> timeZone) {
        return functions.ask(Function.DEVICE_ZONE, new String[] {RedisKeys.device(appId, deviceId)}, timeZone.orElse(""));
    }

    /** A device's target and its registered time zone, if it has one. */
    public record ZonedTarget(Target target, Optional<String> timeZone) {
    }

    /**
     * An audience's devices looked up: those to send to, and those left out because their token is
     * stale (each with its time zone, so a send at a local time can take its zone's share of both).
     */
    public record Resolved(List<ZonedTarget> devices, List<ZonedTarget> staleDevices) {
        public Resolved {
            devices = List.copyOf(devices);
            staleDevices = List.copyOf(staleDevices);
        }

        public List<Target> targets() {
            return devices.stream().map(ZonedTarget::target).toList();
        }

        /** Devices found but left out because their token is stale. */
        public int stale() {
            return staleDevices.size();
        }
    }

    /**
     * Targets of the given devices for a fan-out; unknown and stale devices are left out, the stale
     * ones counted in the app's statistics. The look-ups are pipelined.
     */
    public CompletableFuture<Resolved> resolve(String appId, List<String> deviceIds) {
        return lookUp(appId, deviceIds).thenCompose(resolved -> countStaleSkipped(appId, resolved.stale()).thenApply(counted -> resolved));
    }

    /**
     * Like {@link #resolve}, counting nothing: for a caller that takes only part of the audience (one
     * zone group of a send at a local time) and counts its part with {@link #countStaleSkipped}, or
     * that only reads the devices' zones.
     */
    public CompletableFuture<Resolved> lookUp(String appId, List<String> deviceIds) {
        // One device_read call per slice instead of one HMGET per device: a fan-out page costs Redis
        // and this client one command, not a thousand. Slices keep each call short (it runs alone).
        List<CompletableFuture<List<Object>>> slices = new ArrayList<>();
        for (int from = 0; from < deviceIds.size(); from += DEVICES_PER_READ) {
            String[] keys = deviceIds.subList(from, Math.min(deviceIds.size(), from + DEVICES_PER_READ)).stream()
                    .map(deviceId -> RedisKeys.device(appId, deviceId)).toArray(String[]::new);
            slices.add(functions.call(Function.DEVICE_READ, ScriptOutputType.MULTI, keys, READ_FIELDS));
        }
        long staleBefore = staleBefore();
        return CompletableFuture.allOf(slices.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            List<ZonedTarget> devices = new ArrayList<>(deviceIds.size());
            List<ZonedTarget> stale = new ArrayList<>();
            int i = 0;
            for (CompletableFuture<List<Object>> slice : slices) {
                for (Object row : slice.join()) {
                    List<?> values = (List<?>) row;
                    String deviceId = deviceIds.get(i++);
                    if (values.get(0) == null || values.get(1) == null) {
                        continue;
                    }
                    ZonedTarget device = new ZonedTarget(new Target(Channel.valueOf((String) values.get(0)),
                            (String) values.get(1), deviceId), Optional.ofNullable((String) values.get(3)));
                    boolean isStale = values.get(2) != null && Long.parseLong((String) values.get(2)) < staleBefore;
                    (isStale ? stale : devices).add(device);
                }
            }
            return new Resolved(devices, stale);
        });
    }

    /** Counts audience members left out of a fan-out because their token was stale ({@code staleSkipped}). */
    public CompletableFuture<Void> countStaleSkipped(String appId, int stale) {
        return stale == 0 ? CompletableFuture.completedFuture(null)
                : redis.hincrby(RedisKeys.appStats(appId), "staleSkipped", stale).toCompletableFuture().thenApply(counted -> null);
    }
}
