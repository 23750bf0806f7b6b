package dev.herald.dispatcher.send;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.contract.amqp.ConfirmedPublisher.Outgoing;
import dev.herald.contract.amqp.PublishFailedException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The grouping of one-batch sends, against a publisher whose confirms the test gives: each publish
 * is handed to the test, which confirms, nacks or withholds it.
 */
class SendQueueCoalescerTests {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** A message handed to the "broker" and the confirm the test completes. */
    private record Published(Outgoing message, CompletableFuture<Void> confirm) {
    }

    private final BlockingQueue<Published> broker = new LinkedBlockingQueue<>();

    private SendQueueCoalescer coalescer(int batchSize, Duration timeout) {
        return new SendQueueCoalescer(message -> {
            CompletableFuture<Void> confirm = new CompletableFuture<>();
            broker.add(new Published(message, confirm));
            return confirm;
        }, batchSize, timeout);
    }

    private static Outgoing send(String id, int targets) {
        List<Target> to = IntStream.range(0, targets).mapToObj(i -> new Target(Channel.fcm, id + "-" + i, null)).toList();
        PushBatch batch = new PushBatch(id, "app", 0, Priority.high, new Notification("t", "b", Map.of(), Map.of()), null,
                Instant.EPOCH, Instant.EPOCH.plusSeconds(60), to);
        return new Outgoing(Queues.EXCHANGE, Queues.SEND_HIGH, id, batch);
    }

    /** Publishes on a thread of its own; the future completes when publish returns, or with what it threw. */
    private static CompletableFuture<Void> sending(SendQueueCoalescer coalescer, Outgoing outgoing) {
        CompletableFuture<Void> returned = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                coalescer.publish(outgoing);
                returned.complete(null);
            } catch (PublishFailedException | RuntimeException e) {
                returned.completeExceptionally(e);
            }
        });
        return returned;
    }

    /** Starts each send in turn, once the one before it waits for the message out. */
    private static List<CompletableFuture<Void>> waitingBehind(SendQueueCoalescer coalescer, Outgoing... sends) {
        List<CompletableFuture<Void>> callers = new ArrayList<>();
        for (Outgoing outgoing : sends) {
            int before = coalescer.waiting();
            callers.add(sending(coalescer, outgoing));
            await().atMost(TIMEOUT).until(() -> coalescer.waiting() == before + 1);
        }
        return callers;
    }

    private Published next() throws InterruptedException {
        Published published = broker.poll(10, TimeUnit.SECONDS);
        assertThat(published).as("a message published").isNotNull();
        return published;
    }

    /** The queue is idle: a send goes out at once, alone, and returns once confirmed. */
    private void assertSentAloneAtOnce(SendQueueCoalescer coalescer, String id) throws InterruptedException {
        CompletableFuture<Void> caller = sending(coalescer, send(id, 1));
        Published alone = next();
        assertThat(ids(alone.message())).containsExactly(id);
        assertThat(alone.message().headers()).doesNotContainKey(Queues.BATCHES_HEADER);
        alone.confirm().complete(null);
        caller.join();
    }

    private static void assertFailed(CompletableFuture<Void> caller, PublishFailedException.Reason reason) {
        assertThat(caller).failsWithin(TIMEOUT).withThrowableThat().havingCause()
                .isInstanceOfSatisfying(PublishFailedException.class, failed -> assertThat(failed.reason()).isEqualTo(reason));
    }

    private static List<String> ids(Outgoing message) {
        List<String> ids = new ArrayList<>();
        if (message.body() instanceof List<?> batches) {
            batches.forEach(batch -> ids.add(((PushBatch) batch).messageId()));
        } else {
            ids.add(((PushBatch) message.body()).messageId());
        }
        return ids;
    }

    @Test
    void sendsArrivingWhileAMessageAwaitsItsConfirmLeaveTogetherWhenItComes() throws InterruptedException {
        SendQueueCoalescer coalescer = coalescer(500, TIMEOUT);
        CompletableFuture<Void> first = sending(coalescer, send("a", 1));
        Published alone = next();
        assertThat(alone.message().body()).isInstanceOf(PushBatch.class);
        assertThat(alone.message().headers()).doesNotContainKey(Queues.BATCHES_HEADER);

        List<CompletableFuture<Void>> later = waitingBehind(coalescer, send("b", 1), send("c", 1), send("d", 1));
        assertThat(broker).as("nothing more published while the first awaits its confirm").isEmpty();
        assertThat(first).isNotDone();

        alone.confirm().complete(null);
        first.join();
        Published grouped = next();
        assertThat(grouped.message().headers()).containsEntry(Queues.BATCHES_HEADER, 3);
        assertThat(ids(grouped.message())).containsExactly("b", "c", "d");
        assertThat(later).noneMatch(CompletableFuture::isDone);

        grouped.confirm().complete(null);
        later.forEach(CompletableFuture::join);
        assertThat(coalescer.waiting()).isZero();

        // The queue is idle again: the next send goes out at once, alone.
        assertSentAloneAtOnce(coalescer, "e");
    }

    @Test
    void aMessageCarriesAtMostBatchSizeTargetsButALoneLargerSendStillLeaves() throws InterruptedException {
        SendQueueCoalescer coalescer = coalescer(4, TIMEOUT);
        CompletableFuture<Void> first = sending(coalescer, send("a", 1));
        Published out = next();
        List<CompletableFuture<Void>> later = waitingBehind(coalescer, send("w0", 2), send("w1", 2), send("w2", 1), send("w3", 6));
        out.confirm().complete(null);
        List<List<String>> messages = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Published published = next();
            messages.add(ids(published.message()));
            published.confirm().complete(null);
        }
        first.join();
        later.forEach(CompletableFuture::join);
        assertThat(messages).containsExactly(List.of("w0", "w1"), List.of("w2"), List.of("w3"));
    }

    @Test
    void aNackFailsEverySendItCarriedAndTheQueueGoesOn() throws InterruptedException {
        SendQueueCoalescer coalescer = coalescer(500, TIMEOUT);
        CompletableFuture<Void> first = sending(coalescer, send("a", 1));
        Published out = next();
        List<CompletableFuture<Void>> later = waitingBehind(coalescer, send("b", 1), send("c", 1));
        out.confirm().complete(null);
        first.join();

        next().confirm().completeExceptionally(new PublishFailedException(PublishFailedException.Reason.nack, "nacked", null));
        for (CompletableFuture<Void> refused : later) {
            assertFailed(refused, PublishFailedException.Reason.nack);
        }
        assertSentAloneAtOnce(coalescer, "d");
    }

    @Test
    void aSendWhoseCallerGaveUpBeforeItLeftIsNeverPublished() throws InterruptedException {
        SendQueueCoalescer coalescer = coalescer(500, TIMEOUT);
        CompletableFuture<Void> first = sending(coalescer, send("a", 1));
        Published out = next();
        CompletableFuture<Void> gaveUp = new CompletableFuture<>();
        Thread caller = Thread.ofVirtual().start(() -> {
            try {
                coalescer.publish(send("b", 1));
                gaveUp.complete(null);
            } catch (PublishFailedException | RuntimeException e) {
                gaveUp.completeExceptionally(e);
            }
        });
        await().atMost(TIMEOUT).until(() -> coalescer.waiting() == 1);
        caller.interrupt();
        assertFailed(gaveUp, PublishFailedException.Reason.interrupted);
        assertThat(coalescer.waiting()).isZero();

        out.confirm().complete(null);
        first.join();
        // Nothing left with "b": the next send finds the queue idle and goes out alone.
        assertSentAloneAtOnce(coalescer, "c");
        assertThat(broker).isEmpty();
    }

    @Test
    void aMessageNeverConfirmedHoldsItsQueueUpNoLongerThanTheTimeout() throws InterruptedException {
        SendQueueCoalescer coalescer = coalescer(500, Duration.ofMillis(200));
        CompletableFuture<Void> first = sending(coalescer, send("a", 1));
        next();
        assertFailed(first, PublishFailedException.Reason.timeout);
        assertSentAloneAtOnce(coalescer, "b");
    }

    @Test
    void onlyPushBatchesAreGrouped() {
        Outgoing job = new Outgoing(Queues.EXCHANGE, Queues.AUDIENCE, "j", Map.of("not", "a batch"));
        assertThatThrownBy(() -> coalescer(500, TIMEOUT).publish(job)).isInstanceOf(IllegalArgumentException.class);
    }
}
