package dev.herald.sandbox.faults;

import dev.herald.sandbox.SandboxProperties;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/** Holds the current {@link Faults} and applies them: which fault an attempt gets, and the delay. */
@Component
public class FaultInjector {
    private final Faults initial;
    private final AtomicReference<Faults> current;

    public FaultInjector(SandboxProperties properties) {
        this.initial = properties.faults();
        this.current = new AtomicReference<>(initial);
    }

    public Faults faults() {
        return current.get();
    }

    public Faults set(Faults faults) {
        current.set(faults);
        return faults;
    }

    /** Applies a partial update atomically against concurrent updates; invalid results throw. */
    public Faults update(FaultsUpdate update) {
        return current.updateAndGet(faults -> faults.with(update));
    }

    /** Back to the configured values. */
    public Faults restore() {
        return set(initial);
    }

    /**
     * The fault for the {@code attempt}-th attempt (1-based) at {@code token}: a token prefix if it
     * has one, otherwise one random draw against the rates.
     */
    public Decision decide(String token, long attempt) {
        return decide(null, token, attempt);
    }

    /**
     * As {@link #decide(String, long)} for a request of {@code scope} (the FCM project id or the APNs
     * topic): while a 429 storm names the scope, every request of it is answered 429.
     */
    public Decision decide(String scope, String token, long attempt) {
        Faults storm = current.get();
        if (scope != null && storm.tooManyRequestsFor().contains(scope)) {
            return new Decision(Fault.TOO_MANY_REQUESTS, storm.retryAfterSeconds());
        }
        Decision forced = TokenPrefix.forced(token, attempt);
        if (forced != null) {
            return forced;
        }
        Faults faults = current.get();
        if (faults.unavailableRate() == 0 && faults.tooManyRequestsRate() == 0 && faults.unregisteredRate() == 0) {
            return Decision.ACCEPT;
        }
        double draw = ThreadLocalRandom.current().nextDouble();
        if (draw < faults.unavailableRate()) {
            return Decision.UNAVAILABLE;
        }
        draw -= faults.unavailableRate();
        if (draw < faults.tooManyRequestsRate()) {
            return new Decision(Fault.TOO_MANY_REQUESTS, faults.retryAfterSeconds());
        }
        draw -= faults.tooManyRequestsRate();
        return draw < faults.unregisteredRate() ? Decision.UNREGISTERED : Decision.ACCEPT;
    }

    /**
     * Emits {@code answer} after the configured latency, scheduled on {@code timer} rather than a
     * sleeping thread, so thousands of delayed answers cost no threads. Callers pass the
     * connection's own event loop: the answer is then written from the thread that owns the
     * channel, without a hand-off between threads.
     */
    public <T> Mono<T> delay(T answer, ScheduledExecutorService timer) {
        long latencyMs = current.get().latencyMs();
        if (latencyMs == 0) {
            return Mono.just(answer);
        }
        return Mono.create(sink -> {
            ScheduledFuture<?> pending = timer.schedule(() -> sink.success(answer), latencyMs, TimeUnit.MILLISECONDS);
            sink.onCancel(() -> pending.cancel(false));
        });
    }
}
