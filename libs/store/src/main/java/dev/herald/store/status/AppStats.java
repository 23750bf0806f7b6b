package dev.herald.store.status;

import java.util.Map;

/** Per-app delivery totals since the app was created. */
public record AppStats(long sent, long failed, long expired, long tokensRemoved, Map<String, Long> failures) {
    public AppStats {
        failures = Map.copyOf(failures);
    }
}
