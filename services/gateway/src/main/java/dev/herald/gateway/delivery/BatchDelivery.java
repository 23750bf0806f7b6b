package dev.herald.gateway.delivery;

import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.gateway.deadletter.DeadLetters;
import dev.herald.gateway.quota.DeliveryGate;
import dev.herald.gateway.quota.Parking;
import dev.herald.gateway.quota.QuotaMetrics;
import dev.herald.store.app.App;
import dev.herald.store.app.AppCache;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.store.status.Outcome;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Delivers one batch: every target gets a final outcome (sent, failed with a reason, or expired),
 * recorded in Redis before the batch counts as done, or waits parked for its app's provider quota
 * or its message's throttle ({@link DeliveryGate}). The caller acknowledges the RabbitMQ delivery
 * only when the returned Mono completes, so a gateway killed mid-batch loses nothing: the batch is
 * redelivered and targets already recorded are skipped. A cancelled message's batch sends nothing:
 * its targets without an outcome end as cancelled (MessageCancels).
 *
 * <p>Work that is stopped (its delivery's channel was lost, so RabbitMQ hands the batch to another
 * consumer) sends no further request and parks nothing: a target not yet sent ends without an
 * outcome, for the redelivery to send, while the requests already sent finish and are recorded, for
 * the redelivery to skip (PendingWork).
 */
public final class BatchDelivery {
    private static final Logger log = LoggerFactory.getLogger(BatchDelivery.class);

    private final Map<Channel, ProviderSender> senders = new EnumMap<>(Channel.class);
    private final AppCache apps;
    private final DeviceRegistry devices;
    private final MessageStatusStore status;
    private final MessageCancels cancels;
    private final DeadLetters deadLetters;
    private final InFlightLimit limit;
    private final Backoff backoff;
    private final DeliveryMetrics metrics;
    private final Clock clock;
    private final DeliveryGate gate;
    private final Parking parking;
    private final QuotaMetrics quotaMetrics;

    /** Not a provider's answer: the target was not sent because this replica knows its app is paused there. */
    private static final ProviderResponse.Rejected HELD = ProviderResponse.throttled("HELD_BY_PAUSE", Duration.ZERO);

    public BatchDelivery(List<ProviderSender> senders, AppCache apps, DeviceRegistry devices, MessageStatusStore status,
                         MessageCancels cancels, DeadLetters deadLetters, InFlightLimit limit, Backoff backoff,
                         DeliveryMetrics metrics, Clock clock, DeliveryGate gate, Parking parking, QuotaMetrics quotaMetrics) {
        senders.forEach(sender -> this.senders.put(sender.channel(), sender));
        this.apps = apps;
        this.devices = devices;
        this.status = status;
        this.cancels = cancels;
        this.deadLetters = deadLetters;
        this.limit = limit;
        this.backoff = backoff;
        this.metrics = metrics;
        this.clock = clock;
        this.gate = gate;
        this.parking = parking;
        this.quotaMetrics = quotaMetrics;
    }

    /**
     * Completes when every target's outcome is recorded, or it is parked to wait for a quota or
     * throttle; fails if one could not be (the batch is then redelivered). Targets that already have
     * an outcome (a redelivered batch, or a target an audience expansion queued twice) are skipped:
     * one Redis look-up per batch, so it is always done rather than trusting the redelivered flag.
     * The message's cancel mark is read in the same round trip (the look-ups go out together), before
     * the gate, so a cancelled message takes no quota or throttle tokens.
     *
     * @param stopped true once the work is being stopped (cancelled): no request is started after that
     */
    public Mono<Void> deliver(PushBatch batch, BooleanSupplier stopped) {
        List<String> keys = batch.targets().stream().map(Target::key).toList();
        Mono<Set<String>> finished = Mono.fromFuture(() -> status.finished(batch.messageId(), keys));
        Mono<Boolean> cancelled = Mono.fromFuture(() -> cancels.cancelled(batch.messageId()));
        return Mono.zip(finished, Mono.fromFuture(() -> apps.get(batch.appId())), cancelled)
                .flatMap(found -> found.getT3() ? cancel(batch, keys) : admitAndSend(batch, found.getT1(), found.getT2(), stopped));
    }

    /** Sends the targets the gate admits now, skips those already finished and parks the rest. */
    private Mono<Void> admitAndSend(PushBatch batch, Set<String> finished, Optional<App> app, BooleanSupplier stopped) {
        List<Target> done = batch.targets().stream().filter(t -> finished.contains(t.key())).toList();
        List<Target> pending = batch.targets().stream().filter(t -> !finished.contains(t.key())).toList();
        Queue<Target> later = new ConcurrentLinkedQueue<>();
        Mono<DeliveryGate.Admission> admission = app.isPresent()
                ? gate.admit(app.get(), batch, pending)
                : Mono.just(new DeliveryGate.Admission(pending, List.of(), Duration.ZERO, DeliveryGate.Cause.none));
        return admission.flatMap(admitted -> {
            if (!admitted.later().isEmpty()) {
                quotaMetrics.throttled(batch.appId(), admitted.later(), admitted.cause(), admitted.nextTokenIn());
                later.addAll(admitted.later());
            }
            // Every target at once (the in-flight limit paces the sends). Mono.when counts completions;
            // a flatMap over hundreds of inners rescans them all on every completion (its drain loop
            // was the gateway's hottest frame in the fan-out profile, docs/perf/).
            List<Mono<Void>> work = new ArrayList<>(done.size() + admitted.now().size());
            done.forEach(target -> work.add(Mono.defer(() -> skip(new Work(app, batch, target, later, stopped)))));
            admitted.now().forEach(target -> work.add(Mono.defer(() -> attempt(new Work(app, batch, target, later, stopped), 1))));
            return Mono.when(work)
                    .then(Mono.defer(() -> later.isEmpty() || stopped.getAsBoolean() ? Mono.<Void>empty()
                            : parking.park(batch.withTargets(List.copyOf(later)))));
        });
    }

    /** Ends the batch's targets that have no outcome yet as cancelled, in one step. */
    private Mono<Void> cancel(PushBatch batch, List<String> keys) {
        return Mono.fromFuture(() -> cancels.cancelTargets(batch.messageId(), batch.appId(), batch.batch(), keys))
                .doOnNext(metrics::cancelled)
                .then();
    }

    /**
     * One target of a batch; {@code later} collects the batch's targets that wait for a quota, a
     * throttle or a 429 pause; {@code stopped} tells that the batch's work is being cancelled.
     */
    private record Work(Optional<App> app, PushBatch batch, Target target, Queue<Target> later, BooleanSupplier stopped) {
    }

    /**
     * One attempt at one target. The in-flight permit is held from the request until its final
     * outcome is recorded, so the requests a crash can leave sent-but-unrecorded never exceed the
     * in-flight limit; it is released during a retry's backoff.
     */
    private Mono<Void> attempt(Work work, int attempt) {
        if (attempt == 1) {
            return send(work, attempt);
        }
        // A retry comes after a wait during which the message may have been cancelled.
        return RedisOutage.rideOut(() -> cancels.cancelled(work.batch().messageId()))
                .flatMap(cancelled -> cancelled ? cancel(work.batch(), List.of(work.target().key())) : send(work, attempt));
    }

    private Mono<Void> send(Work work, int attempt) {
        if (work.stopped().getAsBoolean()) {
            return Mono.empty();
        }
        Optional<Outcome> settled = settledWithoutSending(work);
        if (settled.isPresent()) {
            return record(work, settled.get());
        }
        ProviderSender sender = senders.get(work.target().channel());
        // A 429 seen here since the batch was admitted holds the targets not yet sent. Stopped work
        // sends nothing more: the target ends here, unrecorded, and its permit goes back.
        Mono<ProviderResponse> send = Mono.defer(() -> work.stopped().getAsBoolean() ? Mono.<ProviderResponse>empty()
                : gate.pausedHere(work.batch().appId(), work.target().channel())
                ? Mono.just(HELD) : sender.send(work.app().orElseThrow(), work.batch(), work.target()));
        return limit.run(work.batch().priority(), send
                        .onErrorResume(error -> {
                            log.debug("transport failure to {}: {}", work.target().channel(), error.toString());
                            return Mono.just(ProviderResponse.retry("TRANSPORT_ERROR", Duration.ZERO));
                        })
                        .flatMap(response -> switch (response) {
                            case ProviderResponse.Accepted accepted -> {
                                metrics.accepted(work.target().channel(), Duration.between(work.batch().acceptedAt(), clock.instant()));
                                yield record(work, Outcome.sent()).then(Mono.<Duration>empty());
                            }
                            case ProviderResponse.HandedOff handedOff -> record(work, Outcome.handed()).then(Mono.<Duration>empty());
                            case ProviderResponse.Rejected rejected -> rejected(work, attempt, rejected);
                        }))
                // A value is the wait before the next attempt; empty means the target is settled.
                .flatMap(wait -> Mono.delay(wait).then(Mono.defer(() -> attempt(work, attempt + 1))));
    }

    private Optional<Outcome> settledWithoutSending(Work work) {
        if (work.batch().expiredAt(clock.instant())) {
            return Optional.of(Outcome.expired());
        }
        if (work.app().isEmpty()) {
            return Optional.of(Outcome.failed("APP_NOT_FOUND", false));
        }
        if (!senders.containsKey(work.target().channel())) {
            return Optional.of(Outcome.failed("CHANNEL_UNAVAILABLE", false));
        }
        return Optional.empty();
    }

    /** Records a final outcome (empty result), or returns the wait before retrying. */
    private Mono<Duration> rejected(Work work, int attempt, ProviderResponse.Rejected rejected) {
        Target target = work.target();
        return switch (rejected.disposition()) {
            case TOKEN_INVALID -> Mono.fromFuture(() -> devices.removeToken(work.batch().appId(), target.channel(), target.token()))
                    .flatMap(removed -> record(work, Outcome.failed(rejected.reason(), removed)))
                    .then(Mono.empty());
            case PERMANENT -> record(work, Outcome.failed(rejected.reason(), false)).then(Mono.empty());
            case THROTTLED -> {
                work.later().add(target);
                quotaMetrics.throttled(work.batch().appId(), List.of(target), DeliveryGate.Cause.paused, rejected.retryAfter());
                yield rejected == HELD ? Mono.empty()
                        : gate.providerThrottled(work.batch().appId(), target.channel(), rejected.retryAfter()).then(Mono.empty());
            }
            case RETRY -> {
                if (backoff.exhausted(attempt) || backoff.tooLong(rejected.retryAfter())) {
                    metrics.deadLettered(target.channel(), rejected.reason());
                    yield deadLetters.target(work.batch(), target, rejected.reason(), attempt)
                            .then(record(work, Outcome.failed(rejected.reason(), false)))
                            .then(Mono.empty());
                }
                metrics.retry(target.channel(), rejected.reason());
                yield Mono.just(backoff.before(attempt, rejected.retryAfter()));
            }
        };
    }

    private Mono<Void> skip(Work work) {
        metrics.duplicateSkipped();
        return RedisOutage.rideOut(() -> status.alreadyFinished(work.batch().messageId(), work.batch().appId(),
                work.batch().batch(), work.target().key()));
    }

    private Mono<Void> record(Work work, Outcome outcome) {
        // flatMap to an empty Mono rather than then(): then() passes each value it drops to the
        // context's discard hook, a walk up the whole operator chain per target.
        return RedisOutage.<Boolean>rideOut(() -> status.record(work.batch().messageId(), work.batch().appId(),
                        work.batch().batch(), work.target().key(), outcome))
                .flatMap(recorded -> {
                    if (recorded) {
                        metrics.outcome(work.target().channel(), outcome);
                    }
                    return Mono.<Void>empty();
                });
    }
}
