package dev.herald.store.webpush;

import java.math.BigInteger;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECFieldFp;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPrivateKeySpec;
import java.security.spec.ECPublicKeySpec;
import java.util.Arrays;
import java.util.Base64;

/**
 * P-256 keys in the forms Web Push uses: a public key as the 65-byte uncompressed point (a
 * subscription's {@code p256dh}, a VAPID {@code k}, the browser's {@code applicationServerKey}), a
 * private key as its 32-byte scalar, both base64url without padding. The JDK's own EC
 * implementation (SunEC) does the arithmetic; this class only converts.
 */
public final class P256 {
    public static final int PUBLIC_KEY_BYTES = 65;
    private static final int COORDINATE_BYTES = 32;
    private static final ECParameterSpec CURVE = curve();
    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private P256() {
    }

    private static ECParameterSpec curve() {
        try {
            AlgorithmParameters parameters = AlgorithmParameters.getInstance("EC");
            parameters.init(new ECGenParameterSpec("secp256r1"));
            return parameters.getParameterSpec(ECParameterSpec.class);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK has no P-256 (secp256r1)", e);
        }
    }

    public static KeyPair generate() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot generate a P-256 key pair", e);
        }
    }

    /** The uncompressed point {@code 0x04 || x || y}. */
    public static byte[] encode(ECPublicKey key) {
        byte[] point = new byte[PUBLIC_KEY_BYTES];
        point[0] = 0x04;
        unsigned(key.getW().getAffineX(), point, 1);
        unsigned(key.getW().getAffineY(), point, 1 + COORDINATE_BYTES);
        return point;
    }

    /** The private scalar, 32 bytes. */
    public static byte[] encode(ECPrivateKey key) {
        byte[] scalar = new byte[COORDINATE_BYTES];
        unsigned(key.getS(), scalar, 0);
        return scalar;
    }

    /**
     * Reads an uncompressed point, checking that it is one of P-256 (a point off the curve would
     * leak the private key in ECDH).
     *
     * @throws IllegalArgumentException when it is not
     */
    public static ECPublicKey publicKey(byte[] uncompressed) {
        if (uncompressed.length != PUBLIC_KEY_BYTES || uncompressed[0] != 0x04) {
            throw new IllegalArgumentException("must be an uncompressed P-256 point (65 bytes starting with 0x04)");
        }
        BigInteger x = new BigInteger(1, Arrays.copyOfRange(uncompressed, 1, 1 + COORDINATE_BYTES));
        BigInteger y = new BigInteger(1, Arrays.copyOfRange(uncompressed, 1 + COORDINATE_BYTES, PUBLIC_KEY_BYTES));
        BigInteger p = ((ECFieldFp) CURVE.getCurve().getField()).getP();
        BigInteger right = x.pow(3).add(CURVE.getCurve().getA().multiply(x)).add(CURVE.getCurve().getB()).mod(p);
        if (x.compareTo(p) >= 0 || y.compareTo(p) >= 0 || !y.modPow(BigInteger.TWO, p).equals(right)) {
            throw new IllegalArgumentException("is not a point of P-256");
        }
        try {
            return (ECPublicKey) KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(new ECPoint(x, y), CURVE));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("is not a usable P-256 public key", e);
        }
    }

    /** @throws IllegalArgumentException when the scalar is not one of P-256 */
    public static ECPrivateKey privateKey(byte[] scalar) {
        BigInteger s = new BigInteger(1, scalar);
        if (scalar.length != COORDINATE_BYTES || s.signum() == 0 || s.compareTo(CURVE.getOrder()) >= 0) {
            throw new IllegalArgumentException("must be a P-256 private key (32 bytes)");
        }
        try {
            return (ECPrivateKey) KeyFactory.getInstance("EC").generatePrivate(new ECPrivateKeySpec(s, CURVE));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("is not a usable P-256 private key", e);
        }
    }

    public static String base64url(byte[] bytes) {
        return BASE64URL.encodeToString(bytes);
    }

    /** Decodes base64url with or without padding (browsers send it without). */
    public static byte[] fromBase64url(String text) {
        return Base64.getUrlDecoder().decode(text);
    }

    private static void unsigned(BigInteger value, byte[] into, int offset) {
        byte[] bytes = value.toByteArray();
        int length = Math.min(bytes.length, COORDINATE_BYTES);
        System.arraycopy(bytes, bytes.length - length, into, offset + COORDINATE_BYTES - length, length);
    }
}
