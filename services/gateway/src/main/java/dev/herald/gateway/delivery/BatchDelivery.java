package dev.herald.gateway.delivery;

import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.gateway.deadletter.DeadLetters;
import dev.herald.registry.app.App;
import dev.herald.registry.app.AppCache;
import dev.herald.registry.device.DeviceRegistry;
import dev.herald.registry.status.MessageStatusStore;
import dev.herald.registry.status.Outcome;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Delivers one batch: every target gets a final outcome (sent, failed with a reason, or expired),
 * recorded in Redis before the batch counts as done. The caller acknowledges the RabbitMQ delivery
 * only when the returned Mono completes, so a gateway killed mid-batch loses nothing: the batch is
 * redelivered and targets already recorded are skipped.
 */
public final class BatchDelivery {
    private static final Logger log = LoggerFactory.getLogger(BatchDelivery.class);

    private final Map<Channel, ProviderSender> senders = new EnumMap<>(Channel.class);
    private final AppCache apps;
    private final DeviceRegistry devices;
    private final MessageStatusStore status;
    private final DeadLetters deadLetters;
    private final InFlightLimit limit;
    private final Backoff backoff;
    private final DeliveryMetrics metrics;
    private final Clock clock;

    public BatchDelivery(List<ProviderSender> senders, AppCache apps, DeviceRegistry devices, MessageStatusStore status,
                         DeadLetters deadLetters, InFlightLimit limit, Backoff backoff, DeliveryMetrics metrics, Clock clock) {
        senders.forEach(sender -> this.senders.put(sender.channel(), sender));
        this.apps = apps;
        this.devices = devices;
        this.status = status;
        this.deadLetters = deadLetters;
        this.limit = limit;
        this.backoff = backoff;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * Completes when every target's outcome is recorded; fails if one could not be (the batch is
     * then redelivered). Targets that already have an outcome (a redelivered batch, or a target an
     * audience expansion queued twice) are skipped: one Redis look-up per batch, so it is always done
     * rather than trusting the redelivered flag.
     */
    public Mono<Void> deliver(PushBatch batch) {
        Mono<Set<String>> finished = Mono.fromFuture(() -> status.finished(batch.messageId(),
                batch.targets().stream().map(Target::key).toList()));
        return Mono.zip(finished, Mono.fromFuture(() -> apps.get(batch.appId())))
                .flatMapMany(found -> Flux.fromIterable(batch.targets()).map(target -> new Work(found.getT2(), batch, target))
                        .flatMap(work -> found.getT1().contains(work.target().key())
                                ? skip(work)
                                : outcome(work, 1).flatMap(outcome -> record(work, outcome)), Math.max(1, batch.targets().size())))
                .then();
    }

    private record Work(Optional<App> app, PushBatch batch, Target target) {
    }

    private Mono<Outcome> outcome(Work work, int attempt) {
        if (work.batch().expiredAt(clock.instant())) {
            return Mono.just(Outcome.expired());
        }
        ProviderSender sender = senders.get(work.target().channel());
        if (work.app().isEmpty()) {
            return Mono.just(Outcome.failed("APP_NOT_FOUND", false));
        }
        if (sender == null) {
            return Mono.just(Outcome.failed("CHANNEL_UNAVAILABLE", false));
        }
        return limit.run(work.batch().priority(), sender.send(work.app().get(), work.batch(), work.target()))
                .onErrorResume(error -> {
                    log.debug("transport failure to {}: {}", work.target().channel(), error.toString());
                    return Mono.just(ProviderResponse.retry("TRANSPORT_ERROR", Duration.ZERO));
                })
                .flatMap(response -> switch (response) {
                    case ProviderResponse.Accepted accepted -> {
                        metrics.accepted(work.target().channel(), Duration.between(work.batch().acceptedAt(), clock.instant()));
                        yield Mono.just(Outcome.sent());
                    }
                    case ProviderResponse.Rejected rejected -> rejected(work, attempt, rejected);
                });
    }

    private Mono<Outcome> rejected(Work work, int attempt, ProviderResponse.Rejected rejected) {
        Target target = work.target();
        return switch (rejected.disposition()) {
            case TOKEN_INVALID -> Mono.fromFuture(() -> devices.removeToken(work.batch().appId(), target.channel(), target.token()))
                    .map(removed -> Outcome.failed(rejected.reason(), removed));
            case PERMANENT -> Mono.just(Outcome.failed(rejected.reason(), false));
            case RETRY -> {
                if (backoff.exhausted(attempt) || backoff.tooLong(rejected.retryAfter())) {
                    metrics.deadLettered(target.channel(), rejected.reason());
                    yield deadLetters.target(work.batch(), target, rejected.reason(), attempt)
                            .thenReturn(Outcome.failed(rejected.reason(), false));
                }
                metrics.retry(target.channel(), rejected.reason());
                yield Mono.delay(backoff.before(attempt, rejected.retryAfter()))
                        .then(Mono.defer(() -> outcome(work, attempt + 1)));
            }
        };
    }

    private Mono<Void> skip(Work work) {
        metrics.duplicateSkipped();
        return Mono.fromFuture(() -> status.alreadyFinished(work.batch().messageId(), work.batch().appId(),
                work.batch().batch(), work.target().key()));
    }

    private Mono<Void> record(Work work, Outcome outcome) {
        return Mono.fromFuture(() -> status.record(work.batch().messageId(), work.batch().appId(), work.batch().batch(),
                        work.target().key(), outcome))
                .doOnNext(recorded -> {
                    if (recorded) {
                        metrics.outcome(work.target().channel(), outcome);
                    }
                })
                .then();
    }
}
