package dev.herald.gateway.apns;

import com.eatthepath.pushy.apns.ApnsClientMetricsListener;
import com.eatthepath.pushy.apns.metrics.micrometer.MicrometerApnsClientMetricsListener;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import java.util.Set;

/**
 * Pushy's own APNs client metrics (its Micrometer listener): notifications sent, accepted,
 * rejected and failed to write, the time from write to APNs' answer, connections open and failed.
 * Pushy names them bare ({@code notifications.sent}); they are exported as
 * {@code herald.gateway.apns.*} beside the gateway's other metrics.
 *
 * <p>One listener serves every app's client, so the figures are the replica's totals, with no app
 * tag. Its timer matches an answer to its write by Pushy's notification id, which each client
 * counts on its own: two clients' notifications of the same id in flight at once can skew a
 * sample of the timer, never the counters or the connection gauge.
 */
public final class ApnsClientMetrics {
    public static final String PREFIX = "herald.gateway.apns.";
    private static final Set<String> PUSHY_NAMES = Set.of(
            MicrometerApnsClientMetricsListener.NOTIFICATION_TIMER_NAME,
            MicrometerApnsClientMetricsListener.WRITE_FAILURES_COUNTER_NAME,
            MicrometerApnsClientMetricsListener.SENT_NOTIFICATIONS_COUNTER_NAME,
            MicrometerApnsClientMetricsListener.ACCEPTED_NOTIFICATIONS_COUNTER_NAME,
            MicrometerApnsClientMetricsListener.REJECTED_NOTIFICATIONS_COUNTER_NAME,
            MicrometerApnsClientMetricsListener.OPEN_CONNECTIONS_GAUGE_NAME,
            MicrometerApnsClientMetricsListener.CONNECTION_FAILURES_COUNTER_NAME);

    private ApnsClientMetrics() {
    }

    /** Renames Pushy's meters into the gateway's namespace; must be in the registry before {@link #listener}. */
    public static MeterFilter names() {
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                return PUSHY_NAMES.contains(id.getName()) ? id.withName(PREFIX + id.getName()) : id;
            }
        };
    }

    /** The listener every APNs client of this replica reports to; it registers its meters at once (zeros before the first push). */
    public static ApnsClientMetricsListener listener(MeterRegistry registry) {
        return new MicrometerApnsClientMetricsListener(registry);
    }
}
