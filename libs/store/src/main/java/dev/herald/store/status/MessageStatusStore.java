package dev.herald.store.status;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.KeyValue;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.ScoredValue;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Message status and per-app statistics in Redis. {@code msg:{<id>}} holds counters (total, sent,
 * failed, expired, delivered, reason:*), {@code done:{<id>}} maps each finished target to the batch
 * that finished it: that map is what makes a redelivered batch skip targets already sent and what
 * keeps every target counted once. {@code stats:{<app>}} holds the app's running totals; it lives in
 * the app's hash slot, not the message's, so it is counted in a second step once the message's
 * step said "newly recorded" (a process dying between the two loses that one count from the app's
 * totals, never the message's). Target outcomes of one message are recorded in groups, one call for
 * those that finish together (OutcomeGroups).
 */
public final class MessageStatusStore {
    private static final long TRIM_EVERY_MS = 1000;

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final Duration ttl;
    private final Clock clock;
    private final OutcomeGroups outcomes;
    /** When this process last trimmed each app's list of recent messages (ms, from the clock). */
    private final ConcurrentHashMap<String, Long> lastTrimmed = new ConcurrentHashMap<>();

    public MessageStatusStore(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, Duration ttl, Clock clock) {
        this(redis, functions, ttl, clock, Duration.ZERO);
    }

    /** {@code outcomeLinger}: see {@link dev.herald.store.StoreProperties#outcomeLinger()}. */
    public MessageStatusStore(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, Duration ttl, Clock clock,
                              Duration outcomeLinger) {
        this.redis = redis;
        this.functions = functions;
        this.ttl = ttl;
        this.clock = clock;
        this.outcomes = new OutcomeGroups(functions, ttl, clock, outcomeLinger);
    }

    private static String msg(String id) {
        return RedisKeys.message(id);
    }

    private static String done(String id) {
        return RedisKeys.messageDone(id);
    }

    /**
     * Records an accepted message before it is published, so a gateway that consumes it at once
     * finds its record. {@code total} is the number of targets, or empty while an audience is
     * still to be expanded.
     */
    public CompletableFuture<Void> accepted(String id, String appId, Optional<Integer> total, Instant acceptedAt) {
        Map<String, String> fields = new java.util.HashMap<>(Map.of("app", appId, "acceptedAt", acceptedAt.toString()));
        total.ifPresent(n -> {
            fields.put("total", String.valueOf(n));
            fields.put("expanded", "1");
        });
        // Both commands go out back to back on the one connection (Redis runs them in order):
        // one round trip instead of two on the send path.
        CompletableFuture<Long> written = redis.hset(msg(id), fields).toCompletableFuture();
        CompletableFuture<Void> indexed = index(appId, id, acceptedAt);
        return redis.expire(msg(id), ttl).toCompletableFuture().thenCombine(written, (expired, fieldsWritten) -> null)
                .thenCombine(indexed, (statusWritten, indexWritten) -> null);
    }

    /**
     * Adds a message to its app's list of recent messages (sent back to back with the status, no extra
     * round trip to wait for) and renews the list's TTL. What is older than a status can live is
     * trimmed at most once a second per app and process: at thousands of sends a second that command
     * was a sixth of the send path's Redis calls, for a list whose readers check each id against its
     * status anyway (an id trimmed a second late lists a status that {@link #find} reports gone).
     */
    private CompletableFuture<Void> index(String appId, String id, Instant acceptedAt) {
        String key = RedisKeys.appMessages(appId);
        CompletableFuture<Long> added = redis.zadd(key, acceptedAt.toEpochMilli(), id).toCompletableFuture();
        long now = clock.millis();
        CompletableFuture<Long> trimmed = trimDue(appId, now)
                ? redis.zremrangebyscore(key, Range.create(0, now - ttl.toMillis())).toCompletableFuture()
                : CompletableFuture.completedFuture(0L);
        return redis.expire(key, ttl).toCompletableFuture()
                .thenCombine(added, (expires, count) -> null).thenCombine(trimmed, (ignored, count) -> null);
    }

    /** True for the one caller that is to trim now: none did within the last second (or the clock went back). */
    private boolean trimDue(String appId, long now) {
        Long last = lastTrimmed.get(appId);
        if (last == null) {
            return lastTrimmed.putIfAbsent(appId, now) == null;
        }
        if (now >= last && now - last < TRIM_EVERY_MS) {
            return false;
        }
        return lastTrimmed.replace(appId, last, now);
    }

    /**
     * One page of an app's recent messages, newest first: ids accepted at or before {@code atMostMs},
     * after skipping {@code skip} of them (those of that same millisecond a previous page showed), with
     * their acceptance times (ms). Ids whose status expired may still be listed; {@link #find} tells.
     */
    public CompletableFuture<List<ScoredValue<String>>> recent(String appId, long atMostMs, long skip, int count) {
        return redis.zrevrangebyscoreWithScores(RedisKeys.appMessages(appId), Range.create(0, (double) atMostMs),
                Limit.create(skip, count)).toCompletableFuture();
    }

    /** Drops listed ids whose status is gone (expired), so the next page does not read them again. */
    public CompletableFuture<Void> forget(String appId, List<String> ids) {
        if (ids.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return redis.zrem(RedisKeys.appMessages(appId), ids.toArray(String[]::new)).toCompletableFuture()
                .thenApply(ignored -> null);
    }

    /** RabbitMQ confirmed the message. */
    public CompletableFuture<Void> queued(String id, Instant at) {
        return redis.hset(msg(id), "queuedAt", at.toString()).toCompletableFuture().thenApply(ignored -> null);
    }

    /** Publishing failed: the client got an error and no id, so the record must not linger. */
    public CompletableFuture<Void> discard(String id) {
        return redis.del(msg(id)).toCompletableFuture().thenApply(ignored -> null);
    }

    /** The audience is fully expanded: the total is final. */
    public CompletableFuture<Void> expansionDone(String id) {
        return functions.<Long>call(Function.EXPANSION_DONE, ScriptOutputType.INTEGER, new String[] {msg(id)},
                String.valueOf(clock.millis())).thenApply(ignored -> null);
    }

    /**
     * Records one target's outcome once. Returns false when it was already recorded (a redelivery or
     * a duplicate target), in which case nothing was counted. Outcomes of one message that finish
     * while an earlier one is being recorded go to Redis together, in one call.
     */
    public CompletableFuture<Boolean> record(String id, String appId, int batch, String targetKey, Outcome outcome) {
        return outcomes.record(id, appId, batch, targetKey, outcome);
    }

    /**
     * Acknowledges a target that {@link #finished} reported, without sending it again: a no-op for
     * a redelivered batch, and for a duplicate target in another batch it shrinks the total once.
     */
    public CompletableFuture<Void> alreadyFinished(String id, String appId, int batch, String targetKey) {
        return recordInMessage(id, batch, targetKey, "skip", "", "0").thenApply(ignored -> null);
    }

    /**
     * Settles an MQTT target for good (delivered, expired, failed): counted once however often it is
     * settled, the app's totals after the message's.
     */
    public CompletableFuture<Recording> settle(String id, String appId, String targetKey, Outcome outcome) {
        String reason = outcome.reason() == null ? "" : outcome.reason();
        return functions.<Long>call(Function.OUTCOME_SETTLE, ScriptOutputType.INTEGER, new String[] {msg(id), done(id)},
                        targetKey, outcome.kind().name(), reason, String.valueOf(ttl.toSeconds()), String.valueOf(clock.millis()))
                .thenApply(Recording::of)
                .thenCompose(recording -> recording == Recording.RECORDED
                        ? countForApp(appId, outcome.kind().name(), reason, "0").thenApply(counted -> recording)
                        : CompletableFuture.completedFuture(recording));
    }

    /** Whether an MQTT target was settled for good, so a redelivered batch does not box it again. */
    public CompletableFuture<Boolean> settled(String id, String targetKey) {
        return functions.ask(Function.OUTCOME_SETTLED, new String[] {done(id)}, targetKey);
    }

    private CompletableFuture<Recording> recordInMessage(String id, int batch, String targetKey, String field,
                                                         String reason, String tokenRemoved) {
        return functions.<Long>call(Function.OUTCOME_RECORD, ScriptOutputType.INTEGER, new String[] {msg(id), done(id)},
                        targetKey, String.valueOf(batch), field, reason, tokenRemoved, String.valueOf(ttl.toSeconds()),
                        String.valueOf(clock.millis()))
                .thenApply(Recording::of);
    }

    private CompletableFuture<Long> countForApp(String appId, String field, String reason, String tokenRemoved) {
        return functions.call(Function.STATS_COUNT, ScriptOutputType.INTEGER, appStatsKeys(appId, clock.millis()),
                field, reason, tokenRemoved, String.valueOf(MINUTE_BUCKETS_KEPT.toSeconds()),
                String.valueOf(HOUR_BUCKETS_KEPT.toSeconds()));
    }

    /** Where an app's outcomes are counted at {@code nowMillis}: its totals, that minute's and that hour's bucket. */
    static String[] appStatsKeys(String appId, long nowMillis) {
        return new String[] {RedisKeys.appStats(appId), RedisKeys.appStatsMinute(appId, nowMillis / MINUTE.toMillis()),
            RedisKeys.appStatsHour(appId, nowMillis / HOUR.toMillis())};
    }

    /** How long the minute and the hour buckets of {@link #appStatsKeys} are kept, in seconds. */
    static String[] bucketTtlSeconds() {
        return new String[] {String.valueOf(MINUTE_BUCKETS_KEPT.toSeconds()), String.valueOf(HOUR_BUCKETS_KEPT.toSeconds())};
    }

    /**
     * An app's counts per bucket over the window ending now, oldest first: minute buckets for a window
     * of up to an hour (what {@code statsm:} keeps), hour buckets up to a week ({@code statsh:}).
     */
    public CompletableFuture<List<StatsBucket>> history(String appId, Duration window) {
        Duration bucket = window.compareTo(HOUR) <= 0 ? MINUTE : HOUR;
        if (window.compareTo(HOUR_BUCKETS_KEPT.minus(HOUR)) > 0) {
            throw new IllegalArgumentException("history is kept for " + HOUR_BUCKETS_KEPT.minus(HOUR) + " at most");
        }
        long last = clock.millis() / bucket.toMillis();
        long first = last - window.toMillis() / bucket.toMillis() + 1;
        List<CompletableFuture<StatsBucket>> reads = new java.util.ArrayList<>();
        for (long n = first; n <= last; n++) {
            long index = n;
            String key = bucket == MINUTE ? RedisKeys.appStatsMinute(appId, n) : RedisKeys.appStatsHour(appId, n);
            reads.add(redis.hgetall(key).toCompletableFuture().thenApply(fields -> new StatsBucket(
                    Instant.ofEpochMilli(index * bucket.toMillis()), number(fields, "sent"), number(fields, "delivered"),
                    number(fields, "failed"), number(fields, "expired"), number(fields, "tokensRemoved"), reasons(fields))));
        }
        return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
                .thenApply(all -> reads.stream().map(CompletableFuture::join).toList());
    }

    private static final Duration MINUTE = Duration.ofMinutes(1);
    private static final Duration HOUR = Duration.ofHours(1);
    /** Minute buckets back the last-hour chart; an hour more than that covers a bucket read at the turn. */
    private static final Duration MINUTE_BUCKETS_KEPT = Duration.ofHours(2);
    /** Hour buckets back the day and week charts, with a day of slack. */
    private static final Duration HOUR_BUCKETS_KEPT = Duration.ofDays(8);

    /** Which of these targets already have an outcome (a redelivered batch, or a duplicate target). */
    public CompletableFuture<java.util.Set<String>> finished(String id, List<String> targetKeys) {
        if (targetKeys.isEmpty()) {
            return CompletableFuture.completedFuture(java.util.Set.of());
        }
        return redis.hmget(done(id), targetKeys.toArray(String[]::new)).toCompletableFuture()
                .thenApply(values -> values.stream().filter(KeyValue::hasValue).map(KeyValue::getKey)
                        .collect(Collectors.toSet()));
    }

    public CompletableFuture<Optional<MessageStatus>> find(String id) {
        return redis.hgetall(msg(id)).toCompletableFuture().thenApply(fields -> {
            if (fields.isEmpty() || !fields.containsKey("app")) {
                return Optional.empty();
            }
            long total = number(fields, "total");
            long sent = number(fields, "sent");
            long failed = number(fields, "failed");
            long expired = number(fields, "expired");
            long delivered = number(fields, "delivered");
            boolean completed = fields.containsKey("completedAt");
            long cancelled = number(fields, "cancelled");
            String state = MessageStatus.derive(fields.containsKey("queuedAt"), completed, total, sent, failed, expired, delivered);
            // A cancelled send's remaining due times will not fire: it shows none.
            boolean cancelledMessage = fields.containsKey("cancelledAt");
            List<Instant> dueAt = cancelledMessage ? List.of() : dueTimes(fields);
            if (!dueAt.isEmpty() && "accepted".equals(state)) {
                state = "scheduled";
            }
            if (cancelledMessage) {
                state = MessageStatus.afterCancel(completed, total, cancelled, state);
            }
            return Optional.of(new MessageStatus(id, fields.get("app"), state, total, sent, failed, expired, delivered,
                    "1".equals(fields.get("expanded")), number(fields, "tokensRemoved"), reasons(fields),
                    instant(fields.get("acceptedAt")), instant(fields.get("queuedAt")),
                    millis(fields.get("completedAt")), cancelled, millis(fields.get("cancelledAt")), dueAt));
        });
    }

    public CompletableFuture<AppStats> stats(String appId) {
        return redis.hgetall(RedisKeys.appStats(appId)).toCompletableFuture().thenApply(fields -> new AppStats(
                number(fields, "sent"), number(fields, "failed"), number(fields, "expired"),
                number(fields, "tokensRemoved"), reasons(fields), number(fields, "cancelled"),
                number(fields, "staleRemoved"), number(fields, "staleSkipped")));
    }

    private static Map<String, Long> reasons(Map<String, String> fields) {
        Map<String, Long> reasons = new TreeMap<>();
        fields.forEach((field, value) -> {
            if (field.startsWith("reason:")) {
                reasons.put(field.substring(7), Long.parseLong(value));
            }
        });
        return reasons;
    }

    private static long number(Map<String, String> fields, String name) {
        String value = fields.get(name);
        return value == null ? 0 : Long.parseLong(value);
    }

    private static Instant millis(String value) {
        return value == null ? null : Instant.ofEpochMilli(Long.parseLong(value));
    }

    private static Instant instant(String value) {
        return value == null ? null : Instant.parse(value);
    }

    /**
     * Records a send accepted for later: its status reads {@code scheduled} with these due times
     * (one per zone group) until the scheduler fires them (dev.herald.store.schedule.ScheduledSends).
     * {@code scheduled = 1} says nothing of it is queued yet (a cancel can end it at once); the first
     * group that publishes removes it. The record lives until {@code herald.status-ttl} after the
     * last due time.
     */
    public CompletableFuture<Void> scheduled(String id, String appId, List<Instant> dueAt, Instant acceptedAt) {
        Map<String, String> fields = new java.util.HashMap<>(Map.of("app", appId, "acceptedAt", acceptedAt.toString(),
                "scheduled", "1"));
        dueAt.forEach(due -> fields.put("due:" + due.toEpochMilli(), "1"));
        Instant keepUntil = dueAt.stream().max(Instant::compareTo).orElse(acceptedAt).plus(ttl);
        CompletableFuture<Long> written = redis.hset(msg(id), fields).toCompletableFuture();
        CompletableFuture<Void> indexed = index(appId, id, acceptedAt);
        return redis.pexpireat(msg(id), keepUntil).toCompletableFuture().thenCombine(written, (expires, fieldsWritten) -> null)
                .thenCombine(indexed, (statusWritten, indexWritten) -> null);
    }

    private static List<Instant> dueTimes(Map<String, String> fields) {
        return fields.keySet().stream().filter(field -> field.startsWith("due:"))
                .map(field -> Instant.ofEpochMilli(Long.parseLong(field.substring(4)))).sorted().toList();
    }
}
