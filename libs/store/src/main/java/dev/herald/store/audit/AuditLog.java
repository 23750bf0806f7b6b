package dev.herald.store.audit;

import dev.herald.store.keys.RedisKeys;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAddArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The admin audit log: one Redis stream ({@code audit}), one entry per admin action. Every append
 * trims entries older than the retention (XADD MINID: exact, since admin actions are rare, so the log
 * stays bounded without a sweeper); stream ids are times, so paging newest first is XREVRANGE.
 */
public final class AuditLog {
    /** Entries one read looks at, at most: a filter that matches rarely ends a page early instead of reading the whole log. */
    static final int SCAN_LIMIT = 5_000;
    private static final int BATCH = 200;

    private final RedisClusterAsyncCommands<String, String> redis;
    private final Clock clock;
    private final Duration retention;

    public AuditLog(RedisClusterAsyncCommands<String, String> redis, Clock clock, Duration retention) {
        this.redis = redis;
        this.clock = clock;
        this.retention = retention;
    }

    /** Appends the event; completes with its entry id, exceptionally if Redis did not take it. */
    public CompletableFuture<String> append(AuditEvent event) {
        Instant now = clock.instant();
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("at", now.toString());
        fields.put("actor", event.actor());
        fields.put("action", event.action());
        putIfPresent(fields, "app", event.app());
        putIfPresent(fields, "target", event.target());
        putIfPresent(fields, "detail", event.detail());
        putIfPresent(fields, "address", event.address());
        putIfPresent(fields, "forwardedFor", event.forwardedFor());
        long oldest = Math.max(0, now.minus(retention).toEpochMilli());
        XAddArgs trim = XAddArgs.Builder.minId(String.valueOf(oldest));
        return redis.xadd(RedisKeys.audit(), trim, fields).toCompletableFuture();
    }

    public CompletableFuture<AuditPage> read(AuditQuery query) {
        return read(query, query.before().orElse(null), new ArrayList<>(), 0);
    }

    private CompletableFuture<AuditPage> read(AuditQuery query, String before, List<AuditEntry> found, int scanned) {
        // Inclusive upper bound, the `before` entry itself skipped: the same on every Redis 7.
        Range<String> range = Range.from(Range.Boundary.unbounded(),
                before == null ? Range.Boundary.unbounded() : Range.Boundary.including(before));
        return redis.xrevrange(RedisKeys.audit(), range, Limit.from(BATCH + 1)).toCompletableFuture().thenCompose(batch -> {
            String last = before;
            int seen = scanned;
            for (StreamMessage<String, String> message : batch) {
                if (message.getId().equals(before)) {
                    continue;
                }
                last = message.getId();
                seen++;
                AuditEntry entry = entry(message);
                if (query.action().map(entry.action()::equals).orElse(true) && query.app().map(a -> a.equals(entry.app())).orElse(true)) {
                    found.add(entry);
                    if (found.size() == query.limit()) {
                        return CompletableFuture.completedFuture(new AuditPage(List.copyOf(found), last));
                    }
                }
            }
            boolean end = last == null || last.equals(before);
            if (end) {
                return CompletableFuture.completedFuture(new AuditPage(List.copyOf(found), null));
            }
            if (seen >= SCAN_LIMIT) {
                return CompletableFuture.completedFuture(new AuditPage(List.copyOf(found), last));
            }
            return read(query, last, found, seen);
        });
    }

    private static AuditEntry entry(StreamMessage<String, String> message) {
        Map<String, String> body = message.getBody();
        return new AuditEntry(message.getId(), Instant.parse(body.get("at")), body.get("actor"), body.get("action"),
                body.get("app"), body.get("target"), body.get("detail"), body.get("address"), body.get("forwardedFor"));
    }

    private static void putIfPresent(Map<String, String> fields, String name, String value) {
        if (value != null) {
            fields.put(name, value);
        }
    }
}
