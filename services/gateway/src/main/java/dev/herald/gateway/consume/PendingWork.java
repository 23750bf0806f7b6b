package dev.herald.gateway.consume;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Deliveries whose work is still running. On shutdown it stops after the listener containers
 * (which stop taking new work) and before the provider clients are closed, and waits for the work
 * in hand to finish, so a graceful stop records every outcome instead of leaving requests the
 * provider accepted to be sent again after redelivery.
 */
public final class PendingWork implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(PendingWork.class);

    private final Set<CompletableFuture<Void>> pending = ConcurrentHashMap.newKeySet();
    private final Duration drainTimeout;
    private volatile boolean running;

    public PendingWork(Duration drainTimeout) {
        this.drainTimeout = drainTimeout;
    }

    public CompletableFuture<Void> track(CompletableFuture<Void> work) {
        pending.add(work);
        work.whenComplete((ignored, error) -> pending.remove(work));
        return work;
    }

    public int size() {
        return pending.size();
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        int count = pending.size();
        if (count == 0) {
            return;
        }
        log.info("waiting up to {} for {} deliveries in progress", drainTimeout, count);
        try {
            CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
                    .get(drainTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            log.warn("{} deliveries still in progress after {}: they will be redelivered", pending.size(), drainTimeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            // A failed delivery is requeued by the container; nothing more to wait for.
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Just below the listener containers' phase: they stop consuming first. */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 1;
    }
}
