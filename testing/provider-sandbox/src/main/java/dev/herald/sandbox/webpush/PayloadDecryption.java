package dev.herald.sandbox.webpush;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.engines.AESEngine;
import org.bouncycastle.crypto.generators.HKDFBytesGenerator;
import org.bouncycastle.crypto.modes.GCMBlockCipher;
import org.bouncycastle.crypto.params.AEADParameters;
import org.bouncycastle.crypto.params.HKDFParameters;
import org.bouncycastle.crypto.params.KeyParameter;

/**
 * The browser's side of RFC 8291: reads an {@code aes128gcm} body (RFC 8188 header: salt, record
 * size, the sender's ephemeral key), derives the content key and nonce and opens the one record.
 */
final class PayloadDecryption {
    private static final int HEADER_BYTES = 16 + 4 + 1;

    private PayloadDecryption() {
    }

    /** Why a body could not be decrypted. */
    static final class Undecryptable extends Exception {
        Undecryptable(String message) {
            super(message);
        }
    }

    static byte[] decrypt(byte[] body, SubscriptionKeys keys) throws Undecryptable {
        if (body.length < HEADER_BYTES) {
            throw new Undecryptable("body shorter than the aes128gcm header");
        }
        ByteBuffer header = ByteBuffer.wrap(body);
        byte[] salt = new byte[16];
        header.get(salt);
        int recordSize = header.getInt();
        int keyIdLength = Byte.toUnsignedInt(header.get());
        if (keyIdLength != 65 || body.length < HEADER_BYTES + keyIdLength + 17) {
            throw new Undecryptable("the key id is not the sender's uncompressed P-256 key");
        }
        byte[] senderKey = Arrays.copyOfRange(body, HEADER_BYTES, HEADER_BYTES + keyIdLength);
        byte[] record = Arrays.copyOfRange(body, HEADER_BYTES + keyIdLength, body.length);
        if (record.length > recordSize) {
            throw new Undecryptable("more than one record (the record size is " + recordSize + ")");
        }
        byte[] shared;
        try {
            shared = P256Keys.sharedSecret(keys.privateKey(), P256Keys.point(senderKey));
        } catch (IllegalArgumentException e) {
            throw new Undecryptable("the sender's key is not a P-256 point");
        }
        byte[] keyInfo = concat("WebPush: info\0".getBytes(StandardCharsets.US_ASCII), keys.publicKey(), senderKey);
        byte[] ikm = hkdf(shared, keys.authSecret(), keyInfo, 32);
        byte[] contentKey = hkdf(ikm, salt, "Content-Encoding: aes128gcm\0".getBytes(StandardCharsets.US_ASCII), 16);
        byte[] nonce = hkdf(ikm, salt, "Content-Encoding: nonce\0".getBytes(StandardCharsets.US_ASCII), 12);

        GCMBlockCipher gcm = (GCMBlockCipher) GCMBlockCipher.newInstance(AESEngine.newInstance());
        gcm.init(false, new AEADParameters(new KeyParameter(contentKey), 128, nonce));
        byte[] padded = new byte[gcm.getOutputSize(record.length)];
        try {
            int length = gcm.processBytes(record, 0, record.length, padded, 0);
            length += gcm.doFinal(padded, length);
            return unpad(padded, length);
        } catch (InvalidCipherTextException e) {
            throw new Undecryptable("authentication failed: wrong keys or a damaged body");
        }
    }

    /** Strips RFC 8188 padding: the data, a 0x02 delimiter (last record), then zeros. */
    private static byte[] unpad(byte[] padded, int length) throws Undecryptable {
        int end = length - 1;
        while (end >= 0 && padded[end] == 0) {
            end--;
        }
        if (end < 0 || padded[end] != 0x02) {
            throw new Undecryptable("the record does not end with the last-record delimiter 0x02");
        }
        return Arrays.copyOf(padded, end);
    }

    private static byte[] hkdf(byte[] ikm, byte[] salt, byte[] info, int length) {
        HKDFBytesGenerator generator = new HKDFBytesGenerator(new SHA256Digest());
        generator.init(new HKDFParameters(ikm, salt, info));
        byte[] out = new byte[length];
        generator.generateBytes(out, 0, length);
        return out;
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuffer all = ByteBuffer.allocate(Arrays.stream(parts).mapToInt(part -> part.length).sum());
        for (byte[] part : parts) {
            all.put(part);
        }
        return all.array();
    }
}
