package dev.herald.store.status;

import java.time.Instant;
import java.util.Map;

/**
 * An app's counts in one minute or hour (from {@code statsm:}/{@code statsh:}).
 *
 * @param start    when the bucket begins
 * @param failures failures by reason
 */
public record StatsBucket(Instant start, long sent, long delivered, long failed, long expired, long tokensRemoved,
                          Map<String, Long> failures) {
    public StatsBucket {
        failures = Map.copyOf(failures);
    }
}
