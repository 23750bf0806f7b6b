package dev.herald.dispatcher.ratelimit;

import dev.herald.dispatcher.Futures;
import dev.herald.store.quota.RateBuckets;
import dev.herald.store.quota.RateBuckets.Grant;
import dev.herald.store.quota.RateBuckets.Limit;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An app's API tokens taken from its shared bucket in Redis a lease at a time, so a busy replica pays
 * one Redis round trip per lease instead of one per request. Every request still spends a token the
 * shared bucket granted, so replicas together never pass more than the bucket allows; a lease is only
 * spent for {@link #LEASE_TIME} after it was taken (then its rest is dropped), so in any window the
 * tokens spent exceed what the bucket refilled in it by at most {@code LEASE_TIME} worth (2% of a
 * second's rate), however many replicas there are. A lease is sized by use (twice the previous one
 * when that was used up in its time, else one and a half times what it served), at most {@code LEASE_TIME} worth of
 * the rate, so a quiet app takes one token at a time, as without leases, and few leased tokens go unused.
 */
final class ApiTokenLeases {
    static final Duration LEASE_TIME = Duration.ofMillis(20);

    private final RateBuckets buckets;
    private final Clock clock;
    private final ConcurrentHashMap<String, Lease> leases = new ConcurrentHashMap<>();

    ApiTokenLeases(RateBuckets buckets, Clock clock) {
        this.buckets = buckets;
        this.clock = clock;
    }

    /** One token for a request of the app: granted 1, or 0 with the time until the bucket has one. */
    Grant take(String appId, long perSecond) {
        return leases.computeIfAbsent(appId, Lease::new).take(perSecond);
    }

    /** The tokens one replica holds for one app; taking a new lease blocks that app's other requests on this replica for its round trip. */
    private final class Lease {
        private final String appId;
        private final ReentrantLock lock = new ReentrantLock();
        private long left;
        private long used;
        private long size;
        private long expiresAtMillis;

        Lease(String appId) {
            this.appId = appId;
        }

        Grant take(long perSecond) {
            lock.lock();
            try {
                long now = clock.millis();
                if (left > 0 && now < expiresAtMillis) {
                    left--;
                    used++;
                    return new Grant(1, Duration.ZERO);
                }
                long most = Math.max(1, perSecond * LEASE_TIME.toMillis() / 1000);
                // Used up in its time: twice as many. Expired: half as many again as it served (what
                // it drops was taken from the bucket for nothing, so that is kept small).
                boolean expired = now >= expiresAtMillis;
                long wanted = Math.min(most, Math.max(1, expired ? used + used / 2 : 2 * size));
                Grant grant = Futures.await(buckets.takeApi(appId, Limit.perSecond(perSecond), (int) wanted));
                size = wanted;
                used = 0;
                left = 0;
                if (grant.granted() == 0) {
                    return grant;
                }
                left = grant.granted() - 1L;
                used = 1;
                expiresAtMillis = now + LEASE_TIME.toMillis();
                return new Grant(1, Duration.ZERO);
            } finally {
                lock.unlock();
            }
        }
    }
}
