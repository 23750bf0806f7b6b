package dev.herald.store.audit;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class AuditLogTests {
    @RegisterExtension
    static final TestRedis redis = new TestRedis();

    private final AuditLog log = new AuditLog(redis.async(), TestRedis.CLOCK, Duration.ofDays(30));

    private static AuditEvent event(String action, String app, String target) {
        return new AuditEvent("admin:0a1b2c3d", action, app, target, null, "127.0.0.1", null);
    }

    private static AuditQuery query(int limit, String before, String action, String app) {
        return new AuditQuery(limit, Optional.ofNullable(before), Optional.ofNullable(action), Optional.ofNullable(app));
    }

    @Test
    void anAppendedEventIsReadBackWithItsIdAndTime() {
        Instant before = TestRedis.CLOCK.instant();
        String id = join(log.append(new AuditEvent("admin:0a1b2c3d", "key.revoked", "shop", "0000abcd", null, "10.0.0.7",
                "203.0.113.9")));

        AuditPage page = join(log.read(query(10, null, null, null)));

        assertThat(page.entries()).hasSize(1);
        AuditEntry entry = page.entries().getFirst();
        assertThat(entry.id()).isEqualTo(id);
        assertThat(entry.at()).isBetween(before, TestRedis.CLOCK.instant());
        assertThat(entry).usingRecursiveComparison().ignoringFields("id", "at").isEqualTo(
                new AuditEntry(null, null, "admin:0a1b2c3d", "key.revoked", "shop", "0000abcd", null, "10.0.0.7", "203.0.113.9"));
        assertThat(page.next()).isNull();
    }

    @Test
    void pagesGoNewestFirstAndFollowingNextReadsEveryEntryOnce() {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            ids.add(join(log.append(event("key.created", "shop", "k" + i))));
        }

        List<String> read = new ArrayList<>();
        String next = null;
        int pages = 0;
        do {
            AuditPage page = join(log.read(query(3, next, null, null)));
            page.entries().forEach(e -> read.add(e.id()));
            next = page.next();
            pages++;
        } while (next != null && pages < 10);

        assertThat(read).containsExactlyElementsOf(ids.reversed());
        assertThat(pages).isBetween(3, 4);
    }

    @Test
    void filtersByActionAndApp() {
        join(log.append(event("key.created", "shop", "k1")));
        join(log.append(event("key.revoked", "shop", "k1")));
        join(log.append(event("key.created", "news", "k2")));
        join(log.append(event("credentials.re-encrypted", null, null)));

        assertThat(join(log.read(query(10, null, "key.created", null))).entries())
                .extracting(AuditEntry::app).containsExactly("news", "shop");
        assertThat(join(log.read(query(10, null, null, "shop"))).entries())
                .extracting(AuditEntry::action).containsExactly("key.revoked", "key.created");
        assertThat(join(log.read(query(10, null, "key.created", "news"))).entries()).hasSize(1);
        assertThat(join(log.read(query(10, null, "app.created", null))).entries()).isEmpty();
    }

    /** Stream ids are Redis's time: the later log's clock puts the retention's edge just past the old entry. */
    @Test
    void entriesOlderThanTheRetentionAreTrimmedOnTheNextAppend() {
        String old = join(log.append(event("key.created", "shop", "old")));
        long oldMillis = Long.parseLong(old.substring(0, old.indexOf('-')));
        Clock later = Clock.fixed(Instant.ofEpochMilli(oldMillis + 1).plus(Duration.ofDays(30)), ZoneOffset.UTC);
        AuditLog laterLog = new AuditLog(redis.async(), later, Duration.ofDays(30));
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (redisMillis() <= oldMillis && System.nanoTime() < deadline) {
            Thread.onSpinWait(); // the next entry must get a later millisecond than the old one
        }

        join(laterLog.append(event("key.created", "shop", "new")));

        assertThat(join(laterLog.read(query(10, null, null, null))).entries()).extracting(AuditEntry::target)
                .containsExactly("new");
    }

    private static long redisMillis() {
        List<String> time = redis.sync().time();
        return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    }
}
