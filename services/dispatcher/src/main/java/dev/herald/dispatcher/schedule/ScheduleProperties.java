package dev.herald.dispatcher.schedule;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of scheduled sends ({@code herald.dispatcher.schedule.*}).
 *
 * @param maxHorizon    how far ahead a send may be scheduled ({@code sendAt}, or the latest zone of a
 *                      {@code sendAtLocalTime})
 * @param pastTolerance how far in the past a due time may be and still be accepted (sent at once):
 *                      covers clock skew between client and server
 * @param pollInterval  how often each dispatcher replica looks for due sends; a send fires at most
 *                      this late (plus the time to publish it)
 * @param lease         how long a replica holds a due send it claimed; if it dies before publishing,
 *                      another replica fires the send when the lease ends
 * @param claimBatch    due zone groups one replica claims per look
 * @param pageSize      topic members read per Redis round trip when a local-time group is resolved
 */
@ConfigurationProperties("herald.dispatcher.schedule")
public record ScheduleProperties(
        @DefaultValue("30d") Duration maxHorizon,
        @DefaultValue("10s") Duration pastTolerance,
        @DefaultValue("100ms") Duration pollInterval,
        @DefaultValue("60s") Duration lease,
        @DefaultValue("10") int claimBatch,
        @DefaultValue("1000") int pageSize) {

    public ScheduleProperties {
        require(maxHorizon.isPositive(), "max-horizon must be positive");
        require(!pastTolerance.isNegative(), "past-tolerance must not be negative");
        require(pollInterval.isPositive(), "poll-interval must be positive");
        require(lease.compareTo(pollInterval) > 0, "lease must be longer than poll-interval");
        require(claimBatch > 0, "claim-batch must be positive");
        require(pageSize > 0, "page-size must be positive");
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException("herald.dispatcher.schedule." + message);
        }
    }
}
