package dev.herald.store.schedule;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Scheduled sends in Redis. {@code schedule} is one sorted set of every message's zone groups by due
 * time (member {@code <message>|<group>}, the group being its due time in ms); {@code sched:{<id>}}
 * holds the request to send and which groups fired; the pending due times are {@code due:<group>}
 * fields of the message's status ({@code msg:{<id>}}, written by
 * {@link dev.herald.store.status.MessageStatusStore#scheduled}).
 *
 * <p>Firing is claim, publish, mark fired, remove. A claim moves the entry to the end of a lease
 * instead of removing it, so a replica that dies between claim and publish (or between publish and
 * mark) leaves an entry that is due again when the lease ends and another replica fires it. What a
 * second firing publishes again is recognised downstream: token batches keep their numbers, which
 * the gateway's per-target record treats as a redelivery, and an audience job resumes from its
 * expansion progress. Marking a group fired happens once (it removes the group's {@code due:}
 * field), so counts are added once.
 */
public final class ScheduledSends {
    /** One zone group of a scheduled message, due at {@code group} (epoch ms). */
    public record Due(String messageId, long group) {
        public Instant dueAt() {
            return Instant.ofEpochMilli(group);
        }

        String member() {
            return messageId + "|" + group;
        }

        static Due of(String member) {
            int bar = member.lastIndexOf('|');
            return new Due(member.substring(0, bar), Long.parseLong(member.substring(bar + 1)));
        }
    }

    /**
     * What a scheduled message sends: its app, the request as accepted (JSON), whether it is sent at
     * a local time (each group is the audience in the zones where that time falls at the group's
     * instant) and every group's due time (kept in time order).
     */
    public record Payload(String appId, String request, boolean localTime, List<Long> groups) {
        public Payload {
            groups = groups.stream().sorted().toList();
        }
    }

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final Duration statusTtl;

    public ScheduledSends(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, Duration statusTtl) {
        this.redis = redis;
        this.functions = functions;
        this.statusTtl = statusTtl;
    }

    /**
     * Stores the payload, then indexes its groups: an entry in the index always finds its payload.
     * The payload lives as long as the status: until {@code herald.status-ttl} after the last group.
     */
    public CompletableFuture<Void> schedule(String messageId, Payload payload) {
        String key = RedisKeys.scheduledSend(messageId);
        Instant keepUntil = Instant.ofEpochMilli(payload.groups().getLast()).plus(statusTtl);
        CompletableFuture<Long> written = redis.hset(key, Map.of("app", payload.appId(), "request", payload.request(),
                "mode", payload.localTime() ? "local" : "instant",
                "groups", String.join(",", payload.groups().stream().map(String::valueOf).toList()))).toCompletableFuture();
        CompletableFuture<Boolean> expires = redis.pexpireat(key, keepUntil).toCompletableFuture();
        return written.thenCombine(expires, (a, b) -> null).thenCompose(ignored -> {
            List<ScoredValue<String>> entries = payload.groups().stream()
                    .map(group -> ScoredValue.just(group, new Due(messageId, group).member())).toList();
            @SuppressWarnings("unchecked")
            ScoredValue<String>[] array = entries.toArray(ScoredValue[]::new);
            return redis.zadd(RedisKeys.schedule(), array).toCompletableFuture();
        }).thenApply(ignored -> null);
    }

    /** Claims up to {@code max} groups due at {@code now}, each for {@code lease}. */
    public CompletableFuture<List<Due>> claim(Instant now, Duration lease, int max) {
        return functions.<List<Object>>call(Function.SCHEDULE_CLAIM, ScriptOutputType.MULTI, new String[] {RedisKeys.schedule()},
                String.valueOf(now.toEpochMilli()), String.valueOf(now.plus(lease).toEpochMilli()), String.valueOf(max))
                .thenApply(reply -> {
                    List<Due> claimed = new ArrayList<>();
                    for (int i = 0; i < reply.size(); i += 2) {
                        claimed.add(Due.of(String.valueOf(reply.get(i))));
                    }
                    return claimed;
                });
    }

    /** The message's payload; empty once its last group fired (or it expired). */
    public CompletableFuture<Optional<Payload>> load(String messageId) {
        return redis.hgetall(RedisKeys.scheduledSend(messageId)).toCompletableFuture().thenApply(fields -> {
            if (!fields.containsKey("request")) {
                return Optional.empty();
            }
            List<Long> groups = Arrays.stream(fields.get("groups").split(",")).map(Long::parseLong).toList();
            return Optional.of(new Payload(fields.get("app"), fields.get("request"), "local".equals(fields.get("mode")), groups));
        });
    }

    /**
     * Marks a group published: its due time leaves the status, {@code targets} (when the scheduler
     * resolved the audience itself; empty when the immediate send path recorded the total) is added
     * to the total once. False when the group had fired before (a retried claim) or the status is gone.
     */
    public CompletableFuture<Boolean> fired(Due due, Optional<Integer> targets, Instant now) {
        return functions.ask(Function.SCHEDULE_FIRED,
                new String[] {RedisKeys.message(due.messageId()), RedisKeys.scheduledSend(due.messageId())},
                String.valueOf(due.group()), targets.map(String::valueOf).orElse(""), now.toString(),
                String.valueOf(now.toEpochMilli()));
    }

    /** Removes a group from the schedule (fired, cancelled, or its message is gone). */
    public CompletableFuture<Void> remove(Due due) {
        return redis.zrem(RedisKeys.schedule(), due.member()).toCompletableFuture().thenApply(ignored -> null);
    }

    /** Groups waiting in the schedule, claimed ones included. */
    public CompletableFuture<Long> pending() {
        return redis.zcard(RedisKeys.schedule()).toCompletableFuture();
    }
}
