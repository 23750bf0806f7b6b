package dev.herald.gateway.replica;

import dev.herald.gateway.delivery.DeliveryMetrics;
import dev.herald.gateway.delivery.InFlightLimit;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * This gateway replica's lease in Redis ({@link ReplicaLeases}): written when the gateway starts,
 * renewed every third of {@code herald.gateway.replica-lease} (one missed renewal does not lapse
 * it) with the replica's provider requests in flight and targets finished per second since the
 * last renewal, deleted when it stops gracefully. The admin's platform view lists the live ones.
 */
public final class GatewayReplica implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(GatewayReplica.class);

    private final ReplicaLeases leases;
    private final String id;
    private final Duration ttl;
    private final InFlightLimit inFlight;
    private final DeliveryMetrics metrics;
    private final Clock clock;
    private final Instant startedAt;
    private ScheduledExecutorService timer;
    private long lastOutcomes;
    private long lastAt;

    public GatewayReplica(ReplicaLeases leases, String id, Duration ttl, InFlightLimit inFlight, DeliveryMetrics metrics,
                          Clock clock) {
        this.leases = leases;
        this.id = id;
        this.ttl = ttl;
        this.inFlight = inFlight;
        this.metrics = metrics;
        this.clock = clock;
        this.startedAt = clock.instant();
    }

    public String id() {
        return id;
    }

    /** Renews the lease now (the timer calls it; a test may too). */
    public synchronized CompletableFuture<Void> renew() {
        long now = clock.millis();
        long outcomes = metrics.outcomes();
        long perSecond = lastAt == 0 || now <= lastAt ? 0 : (outcomes - lastOutcomes) * 1000 / (now - lastAt);
        lastOutcomes = outcomes;
        lastAt = now;
        return leases.renew(Service.GATEWAY, Replica.of(id, startedAt,
                Map.of("inFlight", (long) inFlight.inFlight(), "deliveriesPerSecond", perSecond)), ttl);
    }

    @Override
    public synchronized void start() {
        renew().join();
        timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("replica-lease").daemon().factory());
        long period = Math.max(100, ttl.toMillis() / 3);
        timer.scheduleAtFixedRate(() -> renew().exceptionally(error -> {
            log.debug("replica lease not renewed: {}", error.toString());
            return null;
        }), period, period, TimeUnit.MILLISECONDS);
    }

    /** First to stop (the highest phase): the platform view stops listing the replica as it begins to drain. */
    @Override
    public synchronized void stop() {
        if (timer == null) {
            return;
        }
        timer.shutdownNow();
        timer = null;
        leases.drop(Service.GATEWAY, id).exceptionally(error -> null).join();
    }

    @Override
    public synchronized boolean isRunning() {
        return timer != null;
    }
}
