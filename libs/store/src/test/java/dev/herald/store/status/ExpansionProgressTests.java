package dev.herald.store.status;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ExpansionProgressTests {
    private static final Duration TTL = Duration.ofHours(1);

    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    private static ExpansionProgress progress;
    private static MessageStatusStore status;

    @BeforeAll
    static void connect() {
        progress = new ExpansionProgress(redis.async(), redis.functions(), TTL);
        status = new MessageStatusStore(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
    }

    @Test
    void aFreshExpansionStartsAtCursorZeroAndBatchZero() {
        ExpansionProgress.Step step = join(progress.load("m1"));

        assertThat(step).isEqualTo(new ExpansionProgress.Step("0", 0));
        assertThat(step.finished()).isFalse();
    }

    @Test
    void advanceSavesTheStepAndCountsQueuedTargets() {
        join(status.accepted("m1", "shop", Optional.empty(), Instant.now()));

        join(progress.advance("m1", new ExpansionProgress.Step("1234", 3), 500));
        join(progress.advance("m1", new ExpansionProgress.Step(ExpansionProgress.DONE, 5), 120));

        ExpansionProgress.Step step = join(progress.load("m1"));
        assertThat(step).isEqualTo(new ExpansionProgress.Step(ExpansionProgress.DONE, 5));
        assertThat(step.finished()).isTrue();
        assertThat(join(status.find("m1")).orElseThrow().total()).isEqualTo(620);
        assertThat(redis.sync().ttl(RedisKeys.expansion("m1"))).isBetween(TTL.toSeconds() - 60, TTL.toSeconds());
    }
}
