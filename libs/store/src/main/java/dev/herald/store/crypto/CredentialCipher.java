package dev.herald.store.crypto;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Encrypts provider credentials before they reach Redis (AES-256-GCM, random 96-bit nonce per
 * value). The app id is bound as associated data, so a ciphertext copied to another app's record
 * does not decrypt.
 *
 * <p>Key rotation: the current key ({@code herald.crypto-key}) encrypts; previous keys
 * ({@code herald.crypto-previous-keys}) only decrypt. A ciphertext is {@code <key id>:<base64>},
 * the key id being 4 bytes of a hash of the key (it names the key without revealing it), so the
 * right key is picked without trying each. A ciphertext written before key ids existed has no
 * prefix (base64 has no {@code :}) and is tried with every key, current first.
 */
public final class CredentialCipher {
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;
    private static final int KEY_ID_CHARS = 8;

    private final String currentId;
    /** Key id to key, the current key first. */
    private final Map<String, SecretKey> keys = new LinkedHashMap<>();
    private final SecureRandom random = new SecureRandom();

    public CredentialCipher(String base64Key) {
        this(base64Key, List.of());
    }

    /**
     * @param currentKey   base64 of 32 bytes: encrypts, and decrypts what it encrypted
     * @param previousKeys base64 of 32 bytes each: decrypt what they encrypted, until a re-encryption
     *                     has rewritten it with the current key
     */
    public CredentialCipher(String currentKey, List<String> previousKeys) {
        if (currentKey == null || currentKey.isBlank()) {
            throw new IllegalStateException("herald.crypto-key is not set: give base64 of 32 random bytes "
                    + "(e.g. `head -c 32 /dev/urandom | base64`); it encrypts provider credentials at rest");
        }
        byte[] current = decodeKey(currentKey, "herald.crypto-key");
        this.currentId = keyId(current);
        keys.put(currentId, new SecretKeySpec(current, "AES"));
        for (String previous : previousKeys) {
            if (previous != null && !previous.isBlank()) {
                byte[] raw = decodeKey(previous, "herald.crypto-previous-keys");
                keys.putIfAbsent(keyId(raw), new SecretKeySpec(raw, "AES"));
            }
        }
    }

    /** The id of the current key: what every ciphertext it writes starts with. */
    public String currentKeyId() {
        return currentId;
    }

    /** Whether this ciphertext was written with the current key (else a re-encryption rewrites it). */
    public boolean isCurrent(String ciphertext) {
        return ciphertext.startsWith(currentId + ":");
    }

    public String encrypt(String plaintext, String associatedData) {
        try {
            byte[] nonce = new byte[NONCE_BYTES];
            random.nextBytes(nonce);
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, keys.get(currentId), new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(associatedData.getBytes(StandardCharsets.UTF_8));
            byte[] sealed = cipher.doFinal(plaintext.getBytes(StandardCharsets.UTF_8));
            return currentId + ":" + Base64.getEncoder().encodeToString(ByteBuffer.allocate(nonce.length + sealed.length)
                    .put(nonce).put(sealed).array());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("credential encryption failed", e);
        }
    }

    public String decrypt(String ciphertext, String associatedData) {
        int colon = ciphertext.indexOf(':');
        if (colon < 0) {
            return decryptUnlabelled(ciphertext, associatedData);
        }
        String id = ciphertext.substring(0, colon);
        SecretKey key = keys.get(id);
        if (key == null) {
            // Never include the ciphertext or key material in the message; the id names the key.
            throw new CredentialKeyException("stored credential was encrypted with key " + safeId(id)
                    + ", which is neither herald.crypto-key nor in herald.crypto-previous-keys (keys here: "
                    + String.join(", ", keys.keySet()) + ")", null);
        }
        try {
            return open(key, ciphertext.substring(colon + 1), associatedData);
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new CredentialKeyException("stored credential cannot be decrypted with key " + id
                    + " (altered, or stored for another app)", e);
        }
    }

    /** Re-encrypts with the current key (a credential already under it is returned as it is). */
    public String reencrypt(String ciphertext, String associatedData) {
        return isCurrent(ciphertext) ? ciphertext : encrypt(decrypt(ciphertext, associatedData), associatedData);
    }

    private String decryptUnlabelled(String ciphertext, String associatedData) {
        List<Exception> failures = new ArrayList<>();
        for (SecretKey key : keys.values()) {
            try {
                return open(key, ciphertext, associatedData);
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                failures.add(e);
            }
        }
        throw new CredentialKeyException("stored credential cannot be decrypted (wrong herald.crypto-key? it was stored "
                + "before key ids; none of herald.crypto-key and herald.crypto-previous-keys opens it)", failures.getFirst());
    }

    private static String open(SecretKey key, String base64, String associatedData) throws GeneralSecurityException {
        byte[] all = Base64.getDecoder().decode(base64);
        if (all.length < NONCE_BYTES) {
            throw new IllegalArgumentException("too short");
        }
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, all, 0, NONCE_BYTES));
        cipher.updateAAD(associatedData.getBytes(StandardCharsets.UTF_8));
        return new String(cipher.doFinal(all, NONCE_BYTES, all.length - NONCE_BYTES), StandardCharsets.UTF_8);
    }

    private static byte[] decodeKey(String base64Key, String setting) {
        byte[] raw;
        try {
            raw = Base64.getDecoder().decode(base64Key.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(setting + " is not valid base64", e);
        }
        if (raw.length != 32) {
            throw new IllegalStateException(setting + " must decode to 32 bytes, got " + raw.length);
        }
        return raw;
    }

    private static String keyId(byte[] key) {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            sha256.update("herald-credential-key-id:".getBytes(StandardCharsets.US_ASCII));
            return HexFormat.of().formatHex(sha256.digest(key), 0, KEY_ID_CHARS / 2);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** A stored prefix is data, not trusted: shown only if it looks like a key id. */
    private static String safeId(String id) {
        return id.matches("[0-9a-f]{" + KEY_ID_CHARS + "}") ? id : "(not a key id)";
    }
}
