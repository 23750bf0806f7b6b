package dev.herald.dispatcher.send;

import java.security.SecureRandom;
import java.util.UUID;

/**
 * Message ids: UUID version 7 (RFC 9562), 48 bits of Unix milliseconds then 74 random bits, so ids
 * sort by time (status keys cluster, logs read in order) and cannot be guessed.
 */
final class MessageIds {
    private static final SecureRandom RANDOM = new SecureRandom();

    private MessageIds() {
    }

    static String next() {
        return next(System.currentTimeMillis());
    }

    static String next(long epochMillis) {
        byte[] random = new byte[10];
        RANDOM.nextBytes(random);
        long high = (epochMillis & 0xFFFF_FFFF_FFFFL) << 16
                | 0x7000L
                | ((random[0] & 0x0FL) << 8) | (random[1] & 0xFFL);
        long low = 0x8000_0000_0000_0000L | ((random[2] & 0x3FL) << 56);
        for (int i = 3; i < 10; i++) {
            low |= (random[i] & 0xFFL) << (8 * (9 - i));
        }
        return new UUID(high, low).toString();
    }
}
