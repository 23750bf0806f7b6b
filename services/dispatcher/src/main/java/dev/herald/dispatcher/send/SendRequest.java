package dev.herald.dispatcher.send;

import dev.herald.contract.Channel;
import dev.herald.contract.Priority;
import dev.herald.dispatcher.Ids;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;
import jakarta.validation.constraints.Size;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.List;
import java.util.Map;

/**
 * The body of {@code POST /v1/apps/{appId}/messages}. Field-level rules are declared here; the
 * rules that span fields (exactly one audience, limits from configuration, payload size) are in
 * {@link SendService}.
 *
 * @param ttl seconds the message may wait for delivery; default and maximum from configuration
 * @param throttle how fast the message may be delivered (at most so many a minute, or spread over
 *                 so many minutes), across every gateway replica; null: as fast as the app's quotas allow
 * @param sendAt when to send (an ISO-8601 instant); absent: now
 * @param sendAtLocalTime when to send, as a wall-clock time in each device's own time zone (the
 *        app's default zone for devices without one, and for tokens); not with {@code sendAt}
 */
public record SendRequest(
        @NotNull(message = "is required") @Valid To to,
        @Size(max = 1024, message = "must be at most 1024 characters") String title,
        @Size(max = 4096, message = "must be at most 4096 characters") String body,
        Map<@NotNull @Size(min = 1, max = 256, message = "keys must be 1 to 256 characters") String,
                @NotNull(message = "values must not be null") String> data,
        @Positive(message = "must be at least 1 second") Long ttl,
        @Pattern(regexp = "[\\x20-\\x7E]{1,64}", message = "must be 1 to 64 printable ASCII characters") String collapseKey,
        Priority priority,
        Map<String, Map<String, Object>> overrides,
        @Valid Throttle throttle,
        Instant sendAt,
        LocalDateTime sendAtLocalTime) {

    /** Whether the send waits for a due time instead of going out now. */
    public boolean scheduled() {
        return sendAt != null || sendAtLocalTime != null;
    }

    /** Exactly one of the two. */
    public record Throttle(
            @Positive(message = "must be at least 1") @Max(value = 100_000_000, message = "must be at most 100000000") Long perMinute,
            @Positive(message = "must be at least 1") @Max(value = 40_320, message = "must be at most 40320 (28 days)") Integer spreadMinutes) {
    }

    /** Exactly one of the three. */
    public record To(
            List<@NotNull(message = "must not be null") @Valid TokenTarget> tokens,
            List<@NotNull(message = "must not be null")
                    @Pattern(regexp = Ids.DEVICE_ID, message = "must match " + Ids.DEVICE_ID) String> devices,
            @Pattern(regexp = Ids.TOPIC, message = "must match " + Ids.TOPIC) String topic) {
    }

    public record TokenTarget(
            @NotNull(message = "is required") Channel channel,
            @NotNull(message = "is required")
            @Pattern(regexp = Ids.TOKEN, message = "must be 1 to 4096 printable ASCII characters without spaces") String token) {
    }
}
