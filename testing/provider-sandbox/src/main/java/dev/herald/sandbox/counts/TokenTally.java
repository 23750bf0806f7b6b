package dev.herald.sandbox.counts;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Counters of one token. Plain volatile fields updated through VarHandles rather than three
 * AtomicLongs: a benchmark can touch millions of tokens, and this keeps each at about 48 bytes.
 */
final class TokenTally {
    private static final VarHandle ATTEMPTS;
    private static final VarHandle FCM;
    private static final VarHandle APNS;
    private static final VarHandle WEBPUSH;
    private static final VarHandle DELIVERED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            ATTEMPTS = lookup.findVarHandle(TokenTally.class, "attempts", long.class);
            FCM = lookup.findVarHandle(TokenTally.class, "fcm", long.class);
            APNS = lookup.findVarHandle(TokenTally.class, "apns", long.class);
            WEBPUSH = lookup.findVarHandle(TokenTally.class, "webpush", long.class);
            DELIVERED = lookup.findVarHandle(TokenTally.class, "delivered", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile long attempts;
    private volatile long fcm;
    private volatile long apns;
    private volatile long webpush;
    /** fcm + apns + webpush, kept apart so "first delivery" is one atomic step even when both race. */
    private volatile long delivered;

    /** The number of this attempt, 1-based. */
    long attempt() {
        return (long) ATTEMPTS.getAndAdd(this, 1L) + 1;
    }

    /** Records an accepted delivery; true if it is the token's first. */
    boolean accepted(Provider provider) {
        (switch (provider) {
            case fcm -> FCM;
            case apns -> APNS;
            case webpush -> WEBPUSH;
        }).getAndAdd(this, 1L);
        return (long) DELIVERED.getAndAdd(this, 1L) == 0;
    }

    TokenCounts snapshot(String token) {
        return new TokenCounts(token, fcm, apns, webpush, attempts);
    }
}
