package dev.herald.store.status;

import java.util.Map;

/**
 * Per-app delivery totals since the app was created.
 *
 * @param cancelled          targets not sent because their message was cancelled
 * @param staleTokensRemoved devices the token sweep removed because their token went unrefreshed too long
 * @param staleTokensSkipped audience members left out of fan-outs because their token is stale
 */
public record AppStats(long sent, long failed, long expired, long tokensRemoved, Map<String, Long> failures,
                       long cancelled, long staleTokensRemoved, long staleTokensSkipped) {
    public AppStats {
        failures = Map.copyOf(failures);
    }
}
