package dev.herald.sandbox.webpush;

import java.security.SecureRandom;
import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;

/**
 * A test subscription's keys, as a browser holds them: its P-256 key pair ({@code p256dh} is the
 * public half) and the 16-byte auth secret.
 */
record SubscriptionKeys(ECPrivateKeyParameters privateKey, byte[] publicKey, byte[] authSecret) {
    private static final SecureRandom RANDOM = new SecureRandom();

    static SubscriptionKeys generate() {
        AsymmetricCipherKeyPair pair = P256Keys.generate();
        byte[] auth = new byte[16];
        RANDOM.nextBytes(auth);
        return new SubscriptionKeys((ECPrivateKeyParameters) pair.getPrivate(),
                P256Keys.encode((ECPublicKeyParameters) pair.getPublic()), auth);
    }
}
