package dev.herald.store.schedule;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.schedule.ScheduledSends.Due;
import dev.herald.store.schedule.ScheduledSends.Payload;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ScheduledSendsTests {
    private static final Duration TTL = Duration.ofHours(1);
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    @RegisterExtension
    static final TestRedis other = new TestRedis(); // a second process on the same Redis
    private static ScheduledSends sends;
    private static ScheduledSends otherSends;
    private static MessageStatusStore status;

    @BeforeAll
    static void connect() {
        sends = new ScheduledSends(redis.async(), redis.functions(), TTL);
        otherSends = new ScheduledSends(other.async(), other.functions(), TTL);
        status = new MessageStatusStore(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
    }

    private static void schedule(String id, boolean localTime, Instant... due) {
        join(status.scheduled(id, "shop", List.of(due), T0));
        join(sends.schedule(id, new Payload("shop", "{}", localTime, List.of(due).stream().map(Instant::toEpochMilli).toList())));
    }

    @Test
    void aGroupIsClaimedByOneProcessOnlyAndAgainOnceItsLeaseEnded() {
        Instant due = T0.plusSeconds(60);
        schedule("m1", false, due);

        assertThat(join(sends.claim(due.minusMillis(1), LEASE, 10))).isEmpty();
        assertThat(join(sends.claim(due, LEASE, 10))).containsExactly(new Due("m1", due.toEpochMilli()));
        assertThat(join(otherSends.claim(due.plusSeconds(1), LEASE, 10))).isEmpty();
        assertThat(join(otherSends.claim(due.plus(LEASE), LEASE, 10))).containsExactly(new Due("m1", due.toEpochMilli()));

        join(otherSends.remove(new Due("m1", due.toEpochMilli())));
        assertThat(join(sends.claim(due.plus(Duration.ofDays(1)), LEASE, 10))).isEmpty();
        assertThat(join(sends.pending())).isZero();
    }

    @Test
    void theStatusReadsScheduledWithItsDueTimesUntilTheyFire() {
        Instant first = T0.plusSeconds(60);
        Instant second = T0.plusSeconds(3600);
        schedule("m2", true, second, first);

        assertThat(redis.sync().hget(RedisKeys.message("m2"), "scheduled")).as("nothing queued yet").isEqualTo("1");
        MessageStatus scheduled = join(status.find("m2")).orElseThrow();
        assertThat(scheduled.state()).isEqualTo("scheduled");
        assertThat(scheduled.dueAt()).containsExactly(first, second);
        assertThat(join(sends.load("m2")).orElseThrow().groups()).containsExactly(first.toEpochMilli(), second.toEpochMilli());

        assertThat(join(sends.fired(new Due("m2", first.toEpochMilli()), Optional.of(3), first))).isTrue();
        assertThat(join(sends.fired(new Due("m2", first.toEpochMilli()), Optional.of(3), first))).as("fired again").isFalse();
        assertThat(redis.sync().hget(RedisKeys.message("m2"), "scheduled")).isNull();
        MessageStatus half = join(status.find("m2")).orElseThrow();
        assertThat(half.state()).isEqualTo("queued");
        assertThat(half.dueAt()).containsExactly(second);
        assertThat(half.total()).isEqualTo(3);
        assertThat(half.expanded()).isFalse();

        assertThat(join(sends.fired(new Due("m2", second.toEpochMilli()), Optional.of(2), second))).isTrue();
        MessageStatus done = join(status.find("m2")).orElseThrow();
        assertThat(done.dueAt()).isEmpty();
        assertThat(done.total()).isEqualTo(5);
        assertThat(done.expanded()).isTrue();
        assertThat(join(sends.load("m2"))).as("the payload goes with the last group").isEmpty();
    }

    @Test
    void anEmptyLocalTimeAudienceCompletesWhenItsLastGroupFired() {
        Instant due = T0.plusSeconds(60);
        schedule("m3", true, due);

        join(sends.fired(new Due("m3", due.toEpochMilli()), Optional.of(0), due));

        assertThat(join(status.find("m3")).orElseThrow().completedAt()).isNotNull();
    }
}
