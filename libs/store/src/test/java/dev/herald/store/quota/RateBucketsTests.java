package dev.herald.store.quota;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.quota.RateBuckets.Grant;
import dev.herald.store.quota.RateBuckets.Limit;
import dev.herald.testsupport.SettableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class RateBucketsTests {
    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    @RegisterExtension
    static final TestRedis otherReplica = new TestRedis();

    // Starts at the real time: a pause is a Redis key expiring at its end (PXAT, Redis' own clock),
    // so a fixed start in the past (it was 2026-11-24T07:00:00Z) made every pause expire at once.
    private final SettableClock clock = new SettableClock(Instant.now());
    private final RateBuckets one = new RateBuckets(redis.functions(), clock);
    private final RateBuckets two = new RateBuckets(otherReplica.functions(), clock);

    @Test
    void aBatchTakesWhatIsLeftAndLearnsWhenTheNextTokenComes() {
        Limit limit = Limit.perMinute(600); // burst 10, refill 590 a minute
        Grant first = join(one.takeProvider("shop", "fcm", limit, 25));
        assertThat(first.granted()).isEqualTo(10);
        assertThat(first.nextTokenIn()).isBetween(Duration.ofMillis(1), Duration.ofMillis(102));

        clock.advance(first.nextTokenIn());
        assertThat(join(two.takeProvider("shop", "fcm", limit, 25)).granted()).isEqualTo(1);
    }

    @Test
    void replicasTogetherNeverPassMoreThanTheLimitInAWindow() {
        Limit limit = Limit.perMinute(1_200);
        long passed = 0;
        for (int step = 0; step < 60; step++) { // one minute in one-second steps, two replicas asking
            passed += join(one.takeProvider("shop", "fcm", limit, 500)).granted();
            passed += join(two.takeProvider("shop", "fcm", limit, 500)).granted();
            clock.advance(Duration.ofSeconds(1));
        }
        passed += join(one.takeProvider("shop", "fcm", limit, 500)).granted();
        assertThat(passed).isBetween(1_190L, 1_200L);
    }

    @Test
    void anUnlimitedBucketGrantsAllButAPauseStopsIt() {
        assertThat(join(one.takeProvider("shop", "apns", Limit.UNLIMITED, 500)))
                .isEqualTo(new Grant(500, Duration.ZERO));

        join(one.pauseProvider("shop", "apns", clock.instant().plusSeconds(30)));
        join(two.pauseProvider("shop", "apns", clock.instant().plusSeconds(5))); // shorter: the longer holds
        Grant paused = join(two.takeProvider("shop", "apns", Limit.UNLIMITED, 500));
        assertThat(paused).isEqualTo(new Grant(0, Duration.ofSeconds(30)));
        assertThat(join(one.takeProvider("other", "apns", Limit.UNLIMITED, 5)).granted()).isEqualTo(5);

        clock.advance(Duration.ofSeconds(30));
        assertThat(join(two.takeProvider("shop", "apns", Limit.UNLIMITED, 500)).granted()).isEqualTo(500);
    }

    @Test
    void messagesAndApiRequestsHaveTheirOwnBuckets() {
        assertThat(join(one.takeMessage("m1", Limit.perMinute(60), 50)).granted()).isEqualTo(1);
        assertThat(join(one.takeMessage("m2", Limit.perMinute(60), 50)).granted()).isEqualTo(1);
        assertThat(join(one.takeApi("shop", Limit.perSecond(2))).granted()).isEqualTo(1);
        assertThat(join(two.takeApi("shop", Limit.perSecond(2))).granted()).isEqualTo(1);
        Grant refused = join(two.takeApi("shop", Limit.perSecond(2)));
        assertThat(refused.granted()).isZero();
        assertThat(refused.nextTokenIn()).isEqualTo(Duration.ofMillis(500));
    }
}
