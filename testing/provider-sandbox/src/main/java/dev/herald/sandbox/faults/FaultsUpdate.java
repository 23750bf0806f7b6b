package dev.herald.sandbox.faults;

/**
 * Body of {@code PUT /sandbox/faults}: fields left out keep their current value, so a test can
 * change one knob without restating the others.
 */
public record FaultsUpdate(
        Long latencyMs,
        Double unregisteredRate,
        Double tooManyRequestsRate,
        Long retryAfterSeconds,
        Double unavailableRate,
        java.util.List<String> tooManyRequestsFor) {

    public FaultsUpdate(Long latencyMs, Double unregisteredRate, Double tooManyRequestsRate, Long retryAfterSeconds,
                        Double unavailableRate) {
        this(latencyMs, unregisteredRate, tooManyRequestsRate, retryAfterSeconds, unavailableRate, null);
    }
}
