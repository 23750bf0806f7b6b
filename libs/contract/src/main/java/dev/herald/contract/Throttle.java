package dev.herald.contract;

/**
 * How fast one message may be delivered, across every gateway replica: at most {@code perMinute}
 * targets a minute, or its audience spread evenly over {@code spreadMinutes} minutes. Exactly one is set.
 *
 * @param perMinute     targets a minute at most
 * @param spreadMinutes minutes the whole audience is spread over
 */
public record Throttle(Long perMinute, Integer spreadMinutes) {
    public Throttle {
        if ((perMinute == null) == (spreadMinutes == null)) {
            throw new IllegalArgumentException("exactly one of perMinute or spreadMinutes");
        }
    }

    /** The rate for an audience of {@code total} targets: a spread becomes the rate that ends on time. */
    public long perMinuteFor(long total) {
        return perMinute != null ? perMinute : Math.max(1, (total + spreadMinutes - 1) / spreadMinutes);
    }
}
