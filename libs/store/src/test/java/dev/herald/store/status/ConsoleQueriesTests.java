package dev.herald.store.status;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import dev.herald.testsupport.SettableClock;
import io.lettuce.core.ScoredValue;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the console reads: an app's recent messages and its counts over time. */
class ConsoleQueriesTests {
    private static final Duration TTL = Duration.ofHours(1);
    private static final Instant NOW = Instant.parse("2026-11-24T06:30:20Z");

    @RegisterExtension
    static final TestRedis redis = new TestRedis();

    private final MessageStatusStore store = new MessageStatusStore(redis.async(), redis.functions(), TTL,
            Clock.fixed(NOW, ZoneOffset.UTC));

    @Test
    void theRecentListIsTrimmedAtMostOnceASecondPerApp() {
        SettableClock clock = new SettableClock(NOW);
        MessageStatusStore store = new MessageStatusStore(redis.async(), redis.functions(), TTL, clock);
        join(store.accepted("t0", "trimmed", Optional.of(1), NOW));
        // Entries that aged past the status TTL (written straight into the list, as an hour of sends would leave them).
        redis.sync().zadd(RedisKeys.appMessages("trimmed"), NOW.minus(TTL).minusSeconds(5).toEpochMilli(), "stale");
        clock.advance(Duration.ofMillis(999));
        join(store.accepted("t1", "trimmed", Optional.of(1), clock.instant()));
        assertThat(redis.sync().zscore(RedisKeys.appMessages("trimmed"), "stale")).as("within the second: not trimmed").isNotNull();
        clock.advance(Duration.ofMillis(1));
        join(store.accepted("t2", "trimmed", Optional.of(1), clock.instant()));
        assertThat(redis.sync().zscore(RedisKeys.appMessages("trimmed"), "stale")).as("a second later: trimmed").isNull();
        assertThat(redis.sync().zrange(RedisKeys.appMessages("trimmed"), 0, -1)).containsExactly("t0", "t1", "t2");
        // A list emptied (the console forgot its messages) and written again within the second keeps a TTL.
        join(store.forget("trimmed", List.of("t0", "t1", "t2")));
        join(store.accepted("t3", "trimmed", Optional.of(1), clock.instant()));
        assertThat(redis.sync().ttl(RedisKeys.appMessages("trimmed"))).isPositive();
        assertThat(redis.sync().hget(RedisKeys.message("t2"), "app")).isEqualTo("trimmed");
        assertThat(redis.sync().ttl(RedisKeys.message("t2"))).isBetween(TTL.toSeconds() - 5, TTL.toSeconds());
    }

    @Test
    void recentMessagesPageNewestFirstAndOldOnesAreTrimmed() {
        join(store.accepted("m-old", "shop", Optional.of(1), NOW.minus(TTL).minusSeconds(1)));
        for (int i = 0; i < 5; i++) {
            join(store.accepted("m" + i, "shop", Optional.of(1), NOW.minusSeconds(10 - i)));
        }
        join(store.scheduled("m-later", "shop", List.of(NOW.plusSeconds(3600)), NOW));
        join(store.accepted("other", "bank", Optional.of(1), NOW));
        // m-old was trimmed by its own write: older than a status can live.

        List<ScoredValue<String>> first = join(store.recent("shop", Long.MAX_VALUE, 0, 3));
        assertThat(first).extracting(ScoredValue::getValue).containsExactly("m-later", "m4", "m3");
        long cursor = (long) first.getLast().getScore();
        assertThat(join(store.recent("shop", cursor, 1, 10))).extracting(ScoredValue::getValue)
                .containsExactly("m2", "m1", "m0");
        assertThat(redis.sync().ttl(RedisKeys.appMessages("shop"))).isPositive();

        join(store.forget("shop", List.of("m1")));
        assertThat(join(store.recent("shop", cursor, 1, 10))).extracting(ScoredValue::getValue).containsExactly("m2", "m0");
    }

    @Test
    void outcomesAreCountedPerMinuteAndPerHour() {
        join(store.accepted("m1", "shop", Optional.of(3), NOW));
        join(store.record("m1", "shop", 0, "fcm:a", Outcome.sent()));
        join(store.record("m1", "shop", 0, "fcm:b", new Outcome(Outcome.Kind.failed, "UNREGISTERED", true)));
        join(store.record("m1", "shop", 0, "mqtt:c", Outcome.handed()));
        join(store.settle("m1", "shop", "mqtt:c", Outcome.delivered()));

        List<StatsBucket> hour = join(store.history("shop", Duration.ofHours(1)));
        assertThat(hour).hasSize(60);
        assertThat(hour.getLast().start()).isEqualTo(Instant.parse("2026-11-24T06:30:00Z"));
        assertThat(hour.getFirst().start()).isEqualTo(Instant.parse("2026-11-24T05:31:00Z"));
        StatsBucket now = hour.getLast();
        assertThat(List.of(now.sent(), now.delivered(), now.failed(), now.tokensRemoved())).containsExactly(1L, 1L, 1L, 1L);
        assertThat(now.failures()).containsEntry("UNREGISTERED", 1L);
        assertThat(hour.subList(0, 59)).allSatisfy(empty -> assertThat(empty.sent()).isZero());

        List<StatsBucket> week = join(store.history("shop", Duration.ofDays(7)));
        assertThat(week).hasSize(168);
        assertThat(week.getLast().start()).isEqualTo(Instant.parse("2026-11-24T06:00:00Z"));
        assertThat(week.getLast().failures()).containsEntry("UNREGISTERED", 1L);
        assertThat(redis.sync().ttl(RedisKeys.appStatsHour("shop", NOW.toEpochMilli() / 3_600_000)))
                .isBetween(Duration.ofDays(7).toSeconds(), Duration.ofDays(8).toSeconds());
    }
}
