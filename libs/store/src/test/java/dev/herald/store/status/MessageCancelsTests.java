package dev.herald.store.status;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MessageCancelsTests {
    private static final Duration TTL = Duration.ofHours(1);
    private static final String APP = "shop";
    private static final String A = "fcm:tok-a";
    private static final String B = "fcm:tok-b";
    private static final String C = "apns:tok-c";

    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    private static MessageStatusStore store;
    private static MessageCancels cancels;

    private final String id = UUID.randomUUID().toString();

    @BeforeAll
    static void connect() {
        store = new MessageStatusStore(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
        cancels = new MessageCancels(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
    }

    private MessageStatus status() {
        return join(store.find(id)).orElseThrow();
    }

    @Test
    void aCancelledMessageEndsEachUnsentTargetCancelledAndKeepsWhatWasSent() {
        join(store.accepted(id, APP, Optional.of(3), Instant.now()));
        join(store.record(id, APP, 0, A, Outcome.sent()));

        assertThat(join(cancels.cancel(id, APP))).isEqualTo(Cancellation.MARKED);
        assertThat(join(cancels.cancelled(id))).isTrue();
        assertThat(status().state()).isEqualTo("cancelling");
        assertThat(status().cancelledAt()).isNotNull();

        // The gateway's batch: A was sent before the cancel, B and C were not.
        assertThat(join(cancels.cancelTargets(id, APP, 0, List.of(A, B, C)))).isEqualTo(2);
        assertThat(join(cancels.cancelTargets(id, APP, 0, List.of(A, B, C)))).as("a redelivered batch").isZero();

        MessageStatus done = status();
        assertThat(done.state()).isEqualTo("cancelled");
        assertThat(done.sent()).isEqualTo(1);
        assertThat(done.cancelled()).isEqualTo(2);
        assertThat(done.pending()).isZero();
        assertThat(done.completedAt()).isNotNull();
        assertThat(join(store.stats(APP)).cancelled()).isEqualTo(2);
    }

    @Test
    void aTargetCancelledIsNeverAlsoSentNorASentOneCancelled() {
        join(store.accepted(id, APP, Optional.of(2), Instant.now()));
        join(cancels.cancel(id, APP));
        join(cancels.cancelTargets(id, APP, 0, List.of(A)));

        assertThat(join(store.record(id, APP, 0, A, Outcome.sent()))).as("sent after it was cancelled").isFalse();
        assertThat(join(store.record(id, APP, 0, B, Outcome.sent()))).isTrue();
        assertThat(join(cancels.cancelTargets(id, APP, 0, List.of(B)))).as("cancelled after it was sent").isZero();

        MessageStatus done = status();
        assertThat(done.sent()).isEqualTo(1);
        assertThat(done.cancelled()).isEqualTo(1);
        assertThat(done.state()).isEqualTo("cancelled");
    }

    @Test
    void aFinishedMessageCannotBeCancelledAndAnotherAppsMessageIsNotFound() {
        join(store.accepted(id, APP, Optional.of(1), Instant.now()));
        assertThat(join(cancels.cancel(id, "other-app"))).isEqualTo(Cancellation.NOT_FOUND);
        assertThat(join(cancels.cancel("no-such-message", APP))).isEqualTo(Cancellation.NOT_FOUND);
        join(store.record(id, APP, 0, A, Outcome.sent()));

        assertThat(join(cancels.cancel(id, APP))).isEqualTo(Cancellation.FINISHED);
        assertThat(status().state()).isEqualTo("sent");
        assertThat(status().cancelledAt()).isNull();
    }

    @Test
    void aRepeatedCancelChangesNothing() {
        join(store.accepted(id, APP, Optional.of(1), Instant.now()));
        assertThat(join(cancels.cancel(id, APP))).isEqualTo(Cancellation.MARKED);
        Instant first = status().cancelledAt();

        assertThat(join(cancels.cancel(id, APP))).isEqualTo(Cancellation.ALREADY_CANCELLED);
        assertThat(status().cancelledAt()).isEqualTo(first);
    }

    @Test
    void aMessageOnlyScheduledEndsAllItsTargetsCancelledAtOnceAndTheSchedulerSkipsIt() {
        join(store.accepted(id, APP, Optional.of(3), Instant.now()));
        // As the scheduler marks a message it holds until its due time.
        redis.sync().hset(RedisKeys.message(id), "scheduled", "1");

        assertThat(join(cancels.cancel(id, APP))).isEqualTo(Cancellation.ENDED);
        assertThat(join(cancels.release(id))).as("the scheduler, firing after the cancel").isFalse();

        MessageStatus done = status();
        assertThat(done.state()).isEqualTo("cancelled");
        assertThat(done.cancelled()).isEqualTo(3);
        assertThat(done.completedAt()).isNotNull();
        assertThat(join(store.stats(APP)).cancelled()).isEqualTo(3);
    }

    @Test
    void aScheduledMessageReleasedFirstIsCancelledLikeAQueuedOne() {
        join(store.accepted(id, APP, Optional.of(2), Instant.now()));
        redis.sync().hset(RedisKeys.message(id), "scheduled", "1");

        assertThat(join(cancels.release(id))).isTrue();
        assertThat(join(cancels.cancel(id, APP))).isEqualTo(Cancellation.MARKED);
        assertThat(status().cancelled()).isZero();
        assertThat(status().state()).isEqualTo("cancelling");
    }
}
