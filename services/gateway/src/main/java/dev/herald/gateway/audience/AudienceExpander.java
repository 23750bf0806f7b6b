package dev.herald.gateway.audience;

import dev.herald.contract.AudienceJob;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.ConfirmedPublisher.Outgoing;
import dev.herald.gateway.GatewayProperties;
import dev.herald.gateway.lifecycle.TokenMetrics;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.device.TopicPage;
import dev.herald.store.status.ExpansionProgress;
import dev.herald.store.status.ExpansionProgress.Step;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatusStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Turns a topic or device-list send into batches on the send queue, one page of the audience at a
 * time, so a send to millions is accepted in milliseconds and expanded here, behind the queue.
 * Progress is saved after each page's batches are confirmed, so an interrupted expansion resumes
 * where it stopped instead of starting over. A cancelled message stops growing: the mark is read
 * before each page, and the audience expanded so far is its final total. Devices whose token is
 * stale are left out (DeviceRegistry#resolve).
 *
 * <p>Stopped work (its delivery's channel was lost, so RabbitMQ hands the job to another consumer)
 * starts no further page, as stopped send work starts no further request (PendingWork): the stop
 * mark is read before each page and the cancel that follows (PendingWork, after its drain timeout)
 * ends the expansion there. The
 * redelivered job resumes from the saved progress; a page cut off mid-publish is republished with
 * the same batch numbers (ExpansionProgress).
 */
public final class AudienceExpander {
    private final DeviceRegistry devices;
    private final MessageStatusStore status;
    private final MessageCancels cancels;
    private final ExpansionProgress progress;
    private final ConfirmedPublisher publisher;
    private final GatewayProperties.Audience config;
    private final TokenMetrics tokenMetrics;

    public AudienceExpander(DeviceRegistry devices, MessageStatusStore status, MessageCancels cancels, ExpansionProgress progress,
                            ConfirmedPublisher publisher, GatewayProperties.Audience config, TokenMetrics tokenMetrics) {
        this.devices = devices;
        this.status = status;
        this.cancels = cancels;
        this.tokenMetrics = tokenMetrics;
        this.progress = progress;
        this.publisher = publisher;
        this.config = config;
    }

    /** @param stopped true once the work is being stopped (cancelled): no page is started after that */
    public Mono<Void> expand(AudienceJob job, BooleanSupplier stopped) {
        return throttlePerMinute(job).map(Optional::of).defaultIfEmpty(Optional.empty())
                .flatMap(perMinute -> expand(job, perMinute.orElse(null), stopped));
    }

    /** A throttled job's rate; a spread is divided over the audience's size when expansion starts. */
    private Mono<Long> throttlePerMinute(AudienceJob job) {
        if (job.throttle() == null) {
            return Mono.empty();
        }
        Mono<Long> size = job.topic() != null
                ? Mono.fromFuture(() -> devices.topicSize(job.appId(), job.topic()))
                : Mono.just((long) job.deviceIds().size());
        return size.map(total -> job.throttle().perMinuteFor(total));
    }

    private Mono<Void> expand(AudienceJob job, Long throttlePerMinute, BooleanSupplier stopped) {
        return Mono.fromFuture(() -> progress.load(job.messageId()))
                .expand(step -> step.finished() ? Mono.empty()
                        : stopped.getAsBoolean() ? Mono.<Step>never() : nextPageUnlessCancelled(job, step, throttlePerMinute))
                .last()
                .then(Mono.defer(() -> Mono.fromFuture(status.expansionDone(job.messageId()))));
    }

    /** A cancelled message's expansion ends here: what was queued so far is its audience. */
    private Mono<Step> nextPageUnlessCancelled(AudienceJob job, Step step, Long throttlePerMinute) {
        return Mono.fromFuture(() -> cancels.cancelled(job.messageId()))
                .flatMap(cancelled -> cancelled
                        ? Mono.just(new Step(ExpansionProgress.DONE, step.nextBatch()))
                        : nextPage(job, step, throttlePerMinute));
    }

    /** Queues one page and returns the step after it. */
    private Mono<Step> nextPage(AudienceJob job, Step step, Long throttlePerMinute) {
        return page(job, step.cursor())
                .flatMap(page -> Mono.fromFuture(() -> devices.resolve(job.appId(), page.deviceIds()))
                        .flatMap(resolved -> {
                            tokenMetrics.staleSkipped(resolved.stale());
                            List<Target> targets = resolved.targets();
                            List<List<Target>> chunks = chunks(targets, config.batchSize());
                            Step next = new Step(page.last() ? ExpansionProgress.DONE : page.cursor(),
                                    step.nextBatch() + chunks.size());
                            // The page's batches go out together and their confirms are awaited together
                            // (pipelined, not one by one); progress is saved only once all are confirmed.
                            return Flux.range(0, chunks.size())
                                    .flatMap(i -> publish(job.batch(step.nextBatch() + i, chunks.get(i), throttlePerMinute)),
                                            Math.max(1, chunks.size()))
                                    .then(Mono.defer(() -> Mono.fromFuture(progress.advance(job.messageId(), next, targets.size()))))
                                    .thenReturn(next);
                        }));
    }

    private Mono<TopicPage> page(AudienceJob job, String cursor) {
        if (job.topic() != null) {
            return Mono.fromFuture(() -> devices.topicPage(job.appId(), job.topic(), cursor, config.pageSize()));
        }
        int from = Integer.parseInt(cursor);
        int to = Math.min(job.deviceIds().size(), from + config.pageSize());
        return Mono.just(new TopicPage(job.deviceIds().subList(from, to), to >= job.deviceIds().size() ? "0" : String.valueOf(to)));
    }

    private Mono<Void> publish(PushBatch batch) {
        Outgoing outgoing = new Outgoing(Queues.EXCHANGE, Queues.sendQueue(batch.priority()), batch.messageId(), batch);
        // publish() may block under RabbitMQ flow control, so it runs off the event loop.
        return Mono.fromFuture(() -> publisher.publish(outgoing)).subscribeOn(Schedulers.boundedElastic());
    }

    private static List<List<Target>> chunks(List<Target> targets, int size) {
        List<List<Target>> chunks = new ArrayList<>();
        for (int from = 0; from < targets.size(); from += size) {
            chunks.add(targets.subList(from, Math.min(targets.size(), from + size)));
        }
        return chunks;
    }
}
