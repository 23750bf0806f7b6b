package dev.herald.gateway.quota;

import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.ConfirmedPublisher.Outgoing;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Sets aside the targets of a batch that must wait: the batch, cut down to them, goes to
 * {@link Queues#PARK_EXCHANGE} with its send queue as routing key and comes back to that queue after
 * the parking queue's delay. The delivery it came from is acknowledged only after RabbitMQ confirmed
 * the parked copy, so a crash in between sends it twice at worst (the done-map skips what was
 * recorded), never loses it. Its batch number is kept, so its targets stay deduplicated as before.
 */
public final class Parking {
    private final ConfirmedPublisher publisher;

    public Parking(ConfirmedPublisher publisher) {
        this.publisher = publisher;
    }

    public Mono<Void> park(PushBatch waiting) {
        Outgoing outgoing = new Outgoing(Queues.PARK_EXCHANGE, Queues.sendQueue(waiting.priority()), waiting.messageId(), waiting);
        // publish() may block under RabbitMQ flow control, so it runs off the event loop.
        return Mono.fromFuture(() -> publisher.publish(outgoing)).subscribeOn(Schedulers.boundedElastic());
    }
}
