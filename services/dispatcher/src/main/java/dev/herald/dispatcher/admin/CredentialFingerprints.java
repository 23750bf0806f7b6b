package dev.herald.dispatcher.admin;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * What the admin API shows of a stored secret instead of the secret: the first 16 bytes of its SHA-256,
 * enough to tell whether a credential was replaced, and nothing that helps recover it.
 */
final class CredentialFingerprints {
    private CredentialFingerprints() {
    }

    static String of(String secret) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
            return "sha256:" + HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("every JDK has SHA-256", impossible);
        }
    }
}
