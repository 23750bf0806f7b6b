package dev.herald.dispatcher.schedule;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scheduled sends' meters:
 * <ul>
 * <li>{@code herald.dispatcher.schedule.pending}: zone groups waiting in Redis (all apps; every
 * replica reports the same number, so dashboards take the max, not the sum);</li>
 * <li>{@code herald.dispatcher.schedule.scheduled}: zone groups accepted for later;</li>
 * <li>{@code herald.dispatcher.schedule.fired} (mode = instant|local): zone groups published;</li>
 * <li>{@code herald.dispatcher.schedule.skipped} (reason = cancelled|gone|fired): claimed groups not
 * published, because the message was cancelled, its status expired, or another claim fired it;</li>
 * <li>{@code herald.dispatcher.schedule.delay}: from a group's due time to its last publish confirm.</li>
 * </ul>
 */
public final class ScheduleMetrics {
    private final MeterRegistry registry;
    private final AtomicLong pending = new AtomicLong();
    private final Counter scheduled;
    private final Timer delay;

    public ScheduleMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("herald.dispatcher.schedule.pending", pending, AtomicLong::get)
                .description("Scheduled zone groups waiting to fire (all apps)")
                .register(registry);
        this.scheduled = Counter.builder("herald.dispatcher.schedule.scheduled")
                .description("Zone groups of sends accepted for later")
                .register(registry);
        this.delay = Timer.builder("herald.dispatcher.schedule.delay")
                .description("From a scheduled group's due time to RabbitMQ's confirm of its last batch")
                .publishPercentileHistogram()
                .maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry);
        for (String mode : new String[] {"instant", "local"}) {
            firedCounter(mode); // registered up front so dashboards see zeros
        }
        for (String reason : new String[] {"cancelled", "gone", "fired"}) {
            skippedCounter(reason);
        }
    }

    private Counter firedCounter(String mode) {
        return Counter.builder("herald.dispatcher.schedule.fired")
                .description("Scheduled zone groups published")
                .tag("mode", mode)
                .register(registry);
    }

    private Counter skippedCounter(String reason) {
        return Counter.builder("herald.dispatcher.schedule.skipped")
                .description("Claimed zone groups not published")
                .tag("reason", reason)
                .register(registry);
    }

    void scheduled(int groups) {
        scheduled.increment(groups);
    }

    void fired(boolean localTime, Duration late) {
        firedCounter(localTime ? "local" : "instant").increment();
        delay.record(late.isNegative() ? Duration.ZERO : late);
    }

    void skipped(String reason) {
        skippedCounter(reason).increment();
    }

    void pending(long groups) {
        pending.set(groups);
    }
}
