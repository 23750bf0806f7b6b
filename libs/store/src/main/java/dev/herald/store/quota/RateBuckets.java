package dev.herald.store.quota;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import io.lettuce.core.ScriptOutputType;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Token buckets in Redis shared by every replica ({@code bucket_take} in herald.lua): an app's quota
 * at a provider (with the provider's "paused until" after a 429), a message sent at a limited rate,
 * and an app's API requests. One call takes a whole batch's worth of tokens, so the hot path pays
 * one round trip per batch. Time comes from the injected clock, so tests move it instead of sleeping.
 */
public final class RateBuckets {
    private final HeraldFunctions functions;
    private final Clock clock;

    public RateBuckets(HeraldFunctions functions, Clock clock) {
        this.functions = functions;
        this.clock = clock;
    }

    /** What a take got: {@code granted} tokens now, and if fewer than asked, how long until the next ({@code nextTokenIn}). */
    public record Grant(int granted, Duration nextTokenIn) {
        public boolean all(int wanted) {
            return granted >= wanted;
        }
    }

    /**
     * A bucket's shape: it holds at most {@code burst} tokens and gets {@code refill} more each
     * {@code window}. {@code refill} 0 is no limit.
     */
    public record Limit(long refill, Duration window, long burst) {
        public static final Limit UNLIMITED = new Limit(0, Duration.ofMinutes(1), 0);

        /**
         * Never more than {@code limit} in any minute, however the minutes are cut (a provider's
         * quota): a burst of a sixtieth of it, and a refill of the rest.
         */
        public static Limit perMinute(long limit) {
            long burst = Math.max(1, limit / 60);
            return new Limit(Math.max(1, limit - burst), Duration.ofMinutes(1), burst);
        }

        /** {@code limit} a second on average, up to a second's worth at once (an API rate). */
        public static Limit perSecond(long limit) {
            return new Limit(limit, Duration.ofSeconds(1), limit);
        }

        public boolean unlimited() {
            return refill <= 0;
        }
    }

    /** Tokens for {@code wanted} requests of an app to a provider; none while the provider paused the app. */
    public CompletableFuture<Grant> takeProvider(String appId, String provider, Limit limit, int wanted) {
        return take(new String[] {RedisKeys.providerQuota(appId, provider), RedisKeys.providerPause(appId, provider)},
                limit, wanted);
    }

    /** Pauses the app's sending to the provider until {@code until} (a 429's Retry-After), on every replica. */
    public CompletableFuture<Instant> pauseProvider(String appId, String provider, Instant until) {
        return functions.<Long>call(HeraldFunctions.Function.BUCKET_PAUSE, ScriptOutputType.INTEGER,
                        new String[] {RedisKeys.providerPause(appId, provider)}, String.valueOf(until.toEpochMilli()))
                .thenApply(Instant::ofEpochMilli);
    }

    /** Tokens for {@code wanted} targets of a message sent at a limited rate. */
    public CompletableFuture<Grant> takeMessage(String messageId, Limit limit, int wanted) {
        return take(new String[] {RedisKeys.messageThrottle(messageId)}, limit, wanted);
    }

    /** One token for one API request of an app. */
    public CompletableFuture<Grant> takeApi(String appId, Limit limit) {
        return takeApi(appId, limit, 1);
    }

    /** Up to {@code wanted} tokens for an app's API requests at once (a replica's lease of them). */
    public CompletableFuture<Grant> takeApi(String appId, Limit limit, int wanted) {
        return take(new String[] {RedisKeys.apiRate(appId)}, limit, wanted);
    }

    private CompletableFuture<Grant> take(String[] keys, Limit limit, int wanted) {
        return functions.<List<Long>>call(HeraldFunctions.Function.BUCKET_TAKE, ScriptOutputType.MULTI, keys,
                        String.valueOf(clock.millis()), String.valueOf(Math.max(0, limit.refill())),
                        String.valueOf(limit.window().toMillis()), String.valueOf(limit.burst()), String.valueOf(wanted))
                .thenApply(answer -> new Grant(answer.get(0).intValue(), Duration.ofMillis(answer.get(1))));
    }
}
