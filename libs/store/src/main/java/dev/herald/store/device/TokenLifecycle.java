package dev.herald.store.device;

import java.time.Duration;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * When a device's token counts as stale and when it is removed, both measured from its last
 * registration (a re-registration refreshes it). Defaults from Firebase's guidance: a token not
 * refreshed for a month is likely stale; FCM rejects Android tokens inactive for 270 days, so
 * keeping one longer only costs a failed request.
 *
 * @param staleAfter  a device not registered again for this long is stale: fan-outs leave it out
 *                    and the stale-devices API lists it
 * @param removeAfter a device not registered again for this long is removed by the token sweep
 *                    (counted in the app's statistics); longer than {@code staleAfter}
 */
public record TokenLifecycle(@DefaultValue("30d") Duration staleAfter, @DefaultValue("270d") Duration removeAfter) {
    public TokenLifecycle {
        if (removeAfter.compareTo(staleAfter) < 0) {
            throw new IllegalArgumentException("herald.tokens.remove-after (" + removeAfter
                    + ") must not be shorter than herald.tokens.stale-after (" + staleAfter + ")");
        }
    }
}
