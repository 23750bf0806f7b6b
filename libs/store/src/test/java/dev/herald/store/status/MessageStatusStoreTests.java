package dev.herald.store.status;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MessageStatusStoreTests {
    private static final Duration TTL = Duration.ofHours(1);
    private static final String APP = "shop";
    private static final String A = "fcm:tok-a";
    private static final String B = "fcm:tok-b";
    private static final String C = "apns:tok-c";

    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    private static MessageStatusStore store;
    /** How the audience expander adds targets to a message: the only way its total grows. */
    private static ExpansionProgress progress;

    private final String id = UUID.randomUUID().toString();
    private final Instant acceptedAt = Instant.now().truncatedTo(ChronoUnit.MILLIS);

    @BeforeAll
    static void connect() {
        store = new MessageStatusStore(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
        progress = new ExpansionProgress(redis.async(), redis.functions(), TTL);
    }

    @Test
    void acceptedMessageIsAcceptedThenQueued() {
        join(store.accepted(id, APP, Optional.of(2), acceptedAt));

        MessageStatus accepted = status();
        assertThat(accepted.state()).isEqualTo("accepted");
        assertThat(accepted.appId()).isEqualTo(APP);
        assertThat(accepted.total()).isEqualTo(2);
        assertThat(accepted.pending()).isEqualTo(2);
        assertThat(accepted.expanded()).isTrue();
        assertThat(accepted.acceptedAt()).isEqualTo(acceptedAt);
        assertThat(accepted.queuedAt()).isNull();
        assertThat(accepted.completedAt()).isNull();

        Instant queuedAt = acceptedAt.plusMillis(5);
        join(store.queued(id, queuedAt));

        MessageStatus queued = status();
        assertThat(queued.state()).isEqualTo("queued");
        assertThat(queued.queuedAt()).isEqualTo(queuedAt);
    }

    @Test
    void unknownMessageHasNoStatus() {
        assertThat(join(store.find("nothing"))).isEmpty();
    }

    @Test
    void anOutcomeForAMessageWhoseStatusIsGoneRecreatesNothing() {
        join(store.accepted(id, APP, Optional.of(1), acceptedAt));
        join(store.discard(id));

        assertThat(join(store.record(id, APP, 0, A, Outcome.sent()))).isFalse();
        assertThat(redis.sync().exists(RedisKeys.message(id), RedisKeys.messageDone(id))).isZero();
    }

    @Test
    void recordsCountsReasonsAndRemovedTokens() {
        join(store.accepted(id, APP, Optional.of(4), acceptedAt));
        join(store.queued(id, acceptedAt));

        assertThat(join(store.record(id, APP, 0, A, Outcome.sent()))).isTrue();
        assertThat(status().state()).isEqualTo("sending");
        assertThat(join(store.record(id, APP, 0, B, Outcome.failed("UNREGISTERED", true)))).isTrue();
        assertThat(join(store.record(id, APP, 0, C, Outcome.failed("RETRIES_EXHAUSTED", false)))).isTrue();
        assertThat(status().completedAt()).isNull();
        assertThat(join(store.record(id, APP, 1, "fcm:tok-d", Outcome.expired()))).isTrue();

        MessageStatus status = status();
        assertThat(status.sent()).isEqualTo(1);
        assertThat(status.failed()).isEqualTo(2);
        assertThat(status.expired()).isEqualTo(1);
        assertThat(status.pending()).isZero();
        assertThat(status.tokensRemoved()).isEqualTo(1);
        assertThat(status.failures()).isEqualTo(Map.of("UNREGISTERED", 1L, "RETRIES_EXHAUSTED", 1L));
        assertThat(status.state()).isEqualTo("sent");
        assertThat(status.completedAt()).isNotNull();
    }

    @Test
    void statsAddUpPerAppAcrossMessages() {
        String other = UUID.randomUUID().toString();
        join(store.accepted(id, APP, Optional.of(2), acceptedAt));
        join(store.accepted(other, APP, Optional.of(2), acceptedAt));
        join(store.accepted("elsewhere", "other-app", Optional.of(1), acceptedAt));

        join(store.record(id, APP, 0, A, Outcome.sent()));
        join(store.record(id, APP, 0, B, Outcome.failed("UNREGISTERED", true)));
        join(store.record(other, APP, 0, A, Outcome.sent()));
        join(store.record(other, APP, 0, B, Outcome.expired()));
        join(store.record("elsewhere", "other-app", 0, A, Outcome.failed("QUOTA_EXCEEDED", false)));

        assertThat(join(store.stats(APP))).isEqualTo(new AppStats(2, 1, 1, 1, Map.of("UNREGISTERED", 1L), 0, 0, 0));
        assertThat(join(store.stats("other-app"))).isEqualTo(new AppStats(0, 1, 0, 0, Map.of("QUOTA_EXCEEDED", 1L), 0, 0, 0));
        assertThat(join(store.stats("no-traffic"))).isEqualTo(new AppStats(0, 0, 0, 0, Map.of(), 0, 0, 0));
    }

    @Test
    void aHandedMqttTargetCountsInItsMessageButNotInTheAppsTotalsUntilItIsSettled() {
        String app = "app-" + UUID.randomUUID();
        join(store.accepted(id, app, Optional.of(1), acceptedAt));

        assertThat(join(store.record(id, app, 0, "mqtt:d1", Outcome.handed()))).isTrue();
        assertThat(redis.sync().exists(MessageStatusStore.appStatsKeys(app, TestRedis.CLOCK.millis()))).isZero();
        assertThat(status().pending()).isEqualTo(1);

        join(store.settle(id, app, "mqtt:d1", Outcome.delivered()));
        assertThat(redis.sync().hgetall(RedisKeys.appStats(app))).containsEntry("delivered", "1").doesNotContainKey("handed");
        assertThat(status().delivered()).isEqualTo(1);
        assertThat(status().completedAt()).isNotNull();
    }

    @Test
    void outcomesRecordedTogetherCountEachTargetOnceAsOneByOneWould() {
        String app = "grouped-" + id;
        int targets = 3 * 500 + 7;   // more than one call's worth (OutcomeGroups.MOST_PER_CALL), so several groups
        join(store.accepted(id, app, Optional.of(targets), acceptedAt));

        List<java.util.concurrent.CompletableFuture<Boolean>> recorded = new java.util.ArrayList<>();
        for (int i = 0; i < targets; i++) {
            Outcome outcome = i % 10 == 0 ? Outcome.failed("UNREGISTERED", true) : Outcome.sent();
            recorded.add(store.record(id, app, i / 500, "fcm:tok-" + i, outcome));
            if (i % 100 == 0) {   // a redelivered batch's answer, and the same target in another batch
                recorded.add(store.record(id, app, i / 500, "fcm:tok-" + i, Outcome.sent()));
                recorded.add(store.record(id, app, 99, "fcm:tok-" + i, Outcome.sent()));
            }
        }

        List<Boolean> answers = recorded.stream().map(TestRedis::join).toList();
        int duplicates = (targets + 99) / 100;
        assertThat(answers.stream().filter(Boolean::booleanValue).count()).isEqualTo(targets);
        assertThat(answers.stream().filter(answer -> !answer).count()).isEqualTo(2L * duplicates);
        int failed = (targets + 9) / 10;
        MessageStatus status = status();
        assertThat(status.sent()).isEqualTo(targets - failed);
        assertThat(status.failed()).isEqualTo(failed);
        assertThat(status.tokensRemoved()).isEqualTo(failed);
        assertThat(status.total()).isEqualTo(targets - duplicates);   // each duplicate shrank the total once
        assertThat(status.completedAt()).isNotNull();
        assertThat(join(store.stats(app)))
                .isEqualTo(new AppStats(targets - failed, failed, 0, failed, Map.of("UNREGISTERED", (long) failed), 0, 0, 0));
    }

    @Test
    void sameTargetRecordedTwiceByTheSameBatchCountsOnce() {
        join(store.accepted(id, APP, Optional.of(2), acceptedAt));

        assertThat(join(store.record(id, APP, 3, A, Outcome.sent()))).isTrue();
        assertThat(join(store.record(id, APP, 3, A, Outcome.failed("UNAVAILABLE", false)))).isFalse();

        MessageStatus status = status();
        assertThat(status.sent()).isEqualTo(1);
        assertThat(status.failed()).isZero();
        assertThat(status.failures()).isEmpty();
        assertThat(status.total()).isEqualTo(2);
        assertThat(status.completedAt()).isNull();
        assertThat(join(store.stats(APP)).sent()).isEqualTo(1);
    }

    @Test
    void sameTargetInAnotherBatchCountsOnceAndShrinksTheTotal() {
        join(store.accepted(id, APP, Optional.of(3), acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.sent()));

        assertThat(join(store.record(id, APP, 1, A, Outcome.sent()))).isFalse();
        assertThat(status().total()).isEqualTo(2);
        // The duplicate's batch redelivered: the total shrinks once per (target, batch), not per delivery.
        assertThat(join(store.record(id, APP, 1, A, Outcome.sent()))).isFalse();
        assertThat(status().total()).isEqualTo(2);
        assertThat(status().completedAt()).isNull();

        join(store.record(id, APP, 1, B, Outcome.sent()));

        MessageStatus status = status();
        assertThat(status.sent()).isEqualTo(2);
        assertThat(status.state()).isEqualTo("sent");
        assertThat(status.completedAt()).isNotNull();
        assertThat(join(store.stats(APP)).sent()).isEqualTo(2);
    }

    @Test
    void duplicateRecordedLastStillCompletesTheMessage() {
        join(store.accepted(id, APP, Optional.of(3), acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.failed("UNAVAILABLE", false)));
        join(store.record(id, APP, 0, B, Outcome.failed("UNAVAILABLE", false)));
        assertThat(status().completedAt()).isNull();

        assertThat(join(store.record(id, APP, 1, A, Outcome.sent()))).isFalse();

        MessageStatus status = status();
        assertThat(status.total()).isEqualTo(2);
        assertThat(status.sent()).isZero();
        assertThat(status.state()).isEqualTo("failed");
        assertThat(status.completedAt()).isNotNull();
    }

    @Test
    void alreadyFinishedDuplicateRecordedLastStillCompletesTheMessage() {
        join(store.accepted(id, APP, Optional.of(3), acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.sent()));
        join(store.record(id, APP, 0, B, Outcome.sent()));

        assertThat(join(store.finished(id, List.of(A, C)))).containsExactly(A);
        join(store.alreadyFinished(id, APP, 1, A));

        MessageStatus status = status();
        assertThat(status.total()).isEqualTo(2);
        assertThat(status.sent()).isEqualTo(2);
        assertThat(status.state()).isEqualTo("sent");
        assertThat(status.completedAt()).isNotNull();
    }

    @Test
    void alreadyFinishedInTheSameBatchChangesNothing() {
        join(store.accepted(id, APP, Optional.of(2), acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.sent()));

        join(store.alreadyFinished(id, APP, 0, A));
        join(store.alreadyFinished(id, APP, 0, B));

        MessageStatus status = status();
        assertThat(status.total()).isEqualTo(2);
        assertThat(status.sent()).isEqualTo(1);
        assertThat(join(store.finished(id, List.of(A, B)))).containsExactly(A);
    }

    @Test
    void completesAsFailedWhenNothingWasDelivered() {
        join(store.accepted(id, APP, Optional.of(2), acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.failed("UNREGISTERED", true)));
        join(store.record(id, APP, 0, B, Outcome.expired()));

        assertThat(status().state()).isEqualTo("failed");
        assertThat(status().completedAt()).isNotNull();
    }

    @Test
    void completesAsExpiredWhenEveryTargetExpired() {
        join(store.accepted(id, APP, Optional.of(2), acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.expired()));
        join(store.record(id, APP, 0, B, Outcome.expired()));

        assertThat(status().state()).isEqualTo("expired");
        assertThat(status().completedAt()).isNotNull();
    }

    @Test
    void audienceMessageIsNotCompleteUntilExpansionIsDone() {
        join(store.accepted(id, APP, Optional.empty(), acceptedAt));
        join(store.queued(id, acceptedAt));
        assertThat(status().expanded()).isFalse();
        join(progress.advance(id, new ExpansionProgress.Step(ExpansionProgress.DONE, 1), 2));

        join(store.record(id, APP, 0, A, Outcome.sent()));
        join(store.record(id, APP, 0, B, Outcome.sent()));

        MessageStatus beforeDone = status();
        assertThat(beforeDone.pending()).isZero();
        assertThat(beforeDone.state()).isEqualTo("sending");
        assertThat(beforeDone.completedAt()).isNull();

        join(store.expansionDone(id));

        MessageStatus done = status();
        assertThat(done.expanded()).isTrue();
        assertThat(done.total()).isEqualTo(2);
        assertThat(done.state()).isEqualTo("sent");
        assertThat(done.completedAt()).isNotNull();
    }

    @Test
    void audienceMessageCompletesWithItsLastOutcomeWhenExpansionEndedFirst() {
        join(store.accepted(id, APP, Optional.empty(), acceptedAt));
        join(progress.advance(id, new ExpansionProgress.Step(ExpansionProgress.DONE, 1), 2));
        join(store.expansionDone(id));
        join(store.record(id, APP, 0, A, Outcome.sent()));
        assertThat(status().completedAt()).isNull();

        join(store.record(id, APP, 0, B, Outcome.sent()));

        assertThat(status().state()).isEqualTo("sent");
        assertThat(status().completedAt()).isNotNull();
    }

    @Test
    void expansionDoneOnAnEmptyAudienceCompletes() {
        join(store.accepted(id, APP, Optional.empty(), acceptedAt));
        join(store.queued(id, acceptedAt));
        assertThat(status().completedAt()).isNull();

        join(store.expansionDone(id));

        MessageStatus status = status();
        assertThat(status.total()).isZero();
        assertThat(status.expanded()).isTrue();
        assertThat(status.completedAt()).isNotNull();
    }

    @Test
    void finishedReturnsExactlyTheRecordedTargets() {
        join(store.accepted(id, APP, Optional.of(4), acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.sent()));
        join(store.record(id, APP, 0, C, Outcome.failed("UNREGISTERED", false)));
        join(store.record(id, APP, 1, A, Outcome.sent()));

        assertThat(join(store.finished(id, List.of(A, B, C, "mqtt:d9")))).containsExactlyInAnyOrder(A, C);
        assertThat(join(store.finished(id, List.of(B)))).isEmpty();
        assertThat(join(store.finished(id, List.of()))).isEmpty();
        assertThat(join(store.finished("other-message", List.of(A)))).isEmpty();
    }

    @Test
    void discardRemovesTheRecord() {
        join(store.accepted(id, APP, Optional.of(1), acceptedAt));
        assertThat(join(store.find(id))).isPresent();

        join(store.discard(id));

        assertThat(join(store.find(id))).isEmpty();
        assertThat(redis.sync().exists(RedisKeys.message(id))).isZero();
    }

    @Test
    void statusRecordExpiresAfterTheTtl() {
        join(store.accepted(id, APP, Optional.of(2), acceptedAt));
        join(store.queued(id, acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.sent()));

        assertThat(redis.sync().ttl(RedisKeys.message(id))).isBetween(TTL.toSeconds() - 60, TTL.toSeconds());
    }

    @Test
    void doneMapExpiresAfterTheTtl() {
        join(store.accepted(id, APP, Optional.of(2), acceptedAt));
        join(store.record(id, APP, 0, A, Outcome.sent()));
        join(store.record(id, APP, 1, A, Outcome.sent()));

        assertThat(redis.sync().ttl(RedisKeys.messageDone(id))).isBetween(TTL.toSeconds() - 60, TTL.toSeconds());
    }

    private MessageStatus status() {
        return join(store.find(id)).orElseThrow();
    }
}
