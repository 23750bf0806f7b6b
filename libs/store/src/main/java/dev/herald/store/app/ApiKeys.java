package dev.herald.store.app;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Optional;

/**
 * API keys look like {@code hk_<keyId>_<secret>}: the key id finds the stored hash without a scan,
 * the 256-bit secret is only ever stored as its SHA-256 (a fast hash is right for random secrets of
 * this length; slow password hashes are for low-entropy input).
 */
public final class ApiKeys {
    private static final SecureRandom RANDOM = new SecureRandom();

    private ApiKeys() {
    }

    /** A freshly issued key: the plaintext, shown once, and what is stored. */
    public record Issued(String key, String keyId, String sha256) {
        @Override
        public String toString() {
            return "Issued[keyId=" + keyId + ", key=***]";
        }
    }

    public static Issued issue() {
        byte[] id = new byte[4];
        byte[] secret = new byte[32];
        RANDOM.nextBytes(id);
        RANDOM.nextBytes(secret);
        String keyId = HexFormat.of().formatHex(id);
        String key = "hk_" + keyId + "_" + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
        return new Issued(key, keyId, sha256(key));
    }

    /** The key id of a presented key, or empty if it is not shaped like one of ours. */
    public static Optional<String> keyIdOf(String presented) {
        if (presented == null || !presented.startsWith("hk_") || presented.length() > 100) {
            return Optional.empty();
        }
        int end = presented.indexOf('_', 3);
        return end == 11 ? Optional.of(presented.substring(3, end)) : Optional.empty();
    }

    /** Whether {@code presented} is one of the app's keys; constant-time in the secret. */
    public static boolean matches(App app, String presented) {
        Optional<String> keyId = keyIdOf(presented);
        if (keyId.isEmpty()) {
            return false;
        }
        byte[] hash = sha256(presented).getBytes(StandardCharsets.US_ASCII);
        return app.keys().stream()
                .filter(k -> k.keyId().equals(keyId.get()))
                .anyMatch(k -> MessageDigest.isEqual(hash, k.sha256().getBytes(StandardCharsets.US_ASCII)));
    }

    static String sha256(String value) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(value.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
