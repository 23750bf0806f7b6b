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

    public boolean matches(String presented) {
        return presented != null && MessageDigest.isEqual(digest, sha256(presented));
    }

    private static byte[] sha256(String value) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "AdminToken[***]";
    }
}
