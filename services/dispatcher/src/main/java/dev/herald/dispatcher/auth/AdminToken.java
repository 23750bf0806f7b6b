package dev.herald.dispatcher.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The admin token, kept only as its SHA-256 and compared in constant time (comparing digests also
 * hides the token's length).
 */
public final class AdminToken {
    private final byte[] digest;

    public AdminToken(String token) {
        this.digest = sha256(token.strip());
    }

    /**
     * What the audit log records of the token: 4 bytes of the SHA-256 of its SHA-256, enough to tell
     * two tokens apart and too short to confirm a guessed token against.
     */
    public String fingerprint() {
        return java.util.HexFormat.of().formatHex(sha256Bytes(digest), 0, 4);
    }

    public boolean matches(String presented) {
        return presented != null && MessageDigest.isEqual(digest, sha256(presented));
    }

    private static byte[] sha256(String value) {
        return sha256Bytes(value.getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] sha256Bytes(byte[] value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "AdminToken[***]";
    }
}
