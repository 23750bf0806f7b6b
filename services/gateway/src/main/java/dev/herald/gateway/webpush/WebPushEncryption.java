package dev.herald.gateway.webpush;

import dev.herald.store.webpush.P256;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.security.interfaces.ECPublicKey;
import java.util.Arrays;
import javax.crypto.Cipher;
import javax.crypto.KDF;
import javax.crypto.KeyAgreement;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.HKDFParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * RFC 8291 message encryption ({@code Content-Encoding: aes128gcm}, RFC 8188) with the JDK's own
 * primitives: ECDH on P-256 ({@code KeyAgreement}), HKDF-SHA256 ({@code javax.crypto.KDF}, final in
 * JDK 25) and AES-128-GCM ({@code Cipher}). One record: Web Push payloads are at most 4 KB, and a
 * push service takes no more (413), so the whole body is checked against {@link #MAX_BODY_BYTES}.
 */
public final class WebPushEncryption {
    /** What push services accept after encryption (RFC 8030 section 7.2 lets them refuse more). */
    public static final int MAX_BODY_BYTES = 4096;
    private static final int RECORD_SIZE = 4096;
    private static final int SALT_BYTES = 16;
    private static final int TAG_BYTES = 16;
    private static final byte LAST_RECORD_DELIMITER = 0x02;
    private static final byte[] KEY_INFO = "WebPush: info\0".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CEK_INFO = "Content-Encoding: aes128gcm\0".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NONCE_INFO = "Content-Encoding: nonce\0".getBytes(StandardCharsets.US_ASCII);
    /** Header (salt, record size, key id length, key id) plus tag and delimiter: what a payload grows by. */
    public static final int OVERHEAD_BYTES = SALT_BYTES + 4 + 1 + P256.PUBLIC_KEY_BYTES + TAG_BYTES + 1;

    private final SecureRandom random = new SecureRandom();

    /** Encrypts {@code plaintext} to a browser with a fresh ephemeral key and salt, as RFC 8291 requires. */
    public byte[] encrypt(byte[] plaintext, byte[] browserPublicKey, byte[] authSecret) {
        byte[] salt = new byte[SALT_BYTES];
        random.nextBytes(salt);
        return encrypt(plaintext, browserPublicKey, authSecret, salt, P256.generate());
    }

    /** With a given salt and ephemeral key pair: RFC 8291 Appendix A's example is checked with it. */
    static byte[] encrypt(byte[] plaintext, byte[] browserPublicKey, byte[] authSecret, byte[] salt, KeyPair ephemeral) {
        try {
            byte[] serverPublicKey = P256.encode((ECPublicKey) ephemeral.getPublic());
            KeyAgreement ecdh = KeyAgreement.getInstance("ECDH");
            ecdh.init(ephemeral.getPrivate());
            ecdh.doPhase(P256.publicKey(browserPublicKey), true);
            byte[] sharedSecret = ecdh.generateSecret();

            KDF hkdf = KDF.getInstance("HKDF-SHA256");
            byte[] keyInfo = ByteBuffer.allocate(KEY_INFO.length + 2 * P256.PUBLIC_KEY_BYTES)
                    .put(KEY_INFO).put(browserPublicKey).put(serverPublicKey).array();
            byte[] ikm = hkdf.deriveData(HKDFParameterSpec.ofExtract().addIKM(sharedSecret).addSalt(authSecret)
                    .thenExpand(keyInfo, 32));
            byte[] contentKey = hkdf.deriveData(HKDFParameterSpec.ofExtract().addIKM(ikm).addSalt(salt)
                    .thenExpand(CEK_INFO, 16));
            byte[] nonce = hkdf.deriveData(HKDFParameterSpec.ofExtract().addIKM(ikm).addSalt(salt)
                    .thenExpand(NONCE_INFO, 12));

            Cipher aes = Cipher.getInstance("AES/GCM/NoPadding");
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(contentKey, "AES"), new GCMParameterSpec(TAG_BYTES * 8, nonce));
            byte[] record = Arrays.copyOf(plaintext, plaintext.length + 1);
            record[plaintext.length] = LAST_RECORD_DELIMITER;
            byte[] sealed = aes.doFinal(record);

            return ByteBuffer.allocate(SALT_BYTES + 4 + 1 + serverPublicKey.length + sealed.length)
                    .put(salt).putInt(RECORD_SIZE).put((byte) serverPublicKey.length).put(serverPublicKey).put(sealed)
                    .array();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Web Push encryption failed", e);
        }
    }
}
