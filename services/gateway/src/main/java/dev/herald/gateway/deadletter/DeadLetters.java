package dev.herald.gateway.deadletter;

import dev.herald.contract.DeadLetter;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.ConfirmedPublisher.Outgoing;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Puts targets the gateway gave up on into the dead-letter queue, narrowed to that one target so
 * it can be inspected and republished as it is. The target's failure is recorded (and its batch
 * acknowledged) only after the dead letter is confirmed.
 */
public final class DeadLetters {
    private final ConfirmedPublisher publisher;
    private final Clock clock;

    public DeadLetters(ConfirmedPublisher publisher, Clock clock) {
        this.publisher = publisher;
        this.clock = clock;
    }

    public Mono<Void> target(PushBatch batch, Target target, String reason, int attempts) {
        PushBatch narrowed = new PushBatch(batch.messageId(), batch.appId(), batch.batch(), batch.priority(),
                batch.notification(), batch.collapseKey(), batch.acceptedAt(), batch.expiresAt(), List.of(target));
        Outgoing letter = new Outgoing(Queues.DEAD_LETTER_EXCHANGE, "", batch.messageId(),
                new DeadLetter(narrowed, reason, attempts, clock.instant()), Map.of(Queues.REASON_HEADER, reason));
        // publish() may block under RabbitMQ flow control, so it runs off the event loop.
        return Mono.fromFuture(() -> publisher.publish(letter)).subscribeOn(Schedulers.boundedElastic());
    }
}
