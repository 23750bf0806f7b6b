package dev.herald.store.mqtt;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The per-device MQTT password: an HMAC-SHA256 of {@code <app>/<device>} (ids may contain
 * {@code :} but never {@code /}, so no two app-device pairs share a text) under a key derived from the
 * platform's crypto key. The dispatcher issues it at registration; the connection manager checks it
 * at CONNECT by recomputing it, so authentication costs no Redis round trip and no secret is stored.
 * A device's password is stable across re-registrations (rotating the crypto key rotates them all).
 */
public final class MqttCredentials {
    private static final String ALGORITHM = "HmacSHA256";
    private final SecretKeySpec key;

    /** @param cryptoKey base64 of the platform's 32-byte crypto key (HERALD_CRYPTO_KEY) */
    public MqttCredentials(String cryptoKey) {
        if (cryptoKey == null || cryptoKey.isBlank()) {
            throw new IllegalArgumentException("herald.crypto-key is required to issue and check MQTT device passwords");
        }
        // A key of its own, so a device password reveals nothing about the key that encrypts credentials.
        this.key = new SecretKeySpec(hmac(new SecretKeySpec(Base64.getDecoder().decode(cryptoKey.trim()), ALGORITHM),
                "herald-mqtt-device-password-v1"), ALGORITHM);
    }

    /** The password of this device. */
    public String password(String appId, String deviceId) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(hmac(key, appId + "/" + deviceId));
    }

    /** Constant-time check of a password a device presented. */
    public boolean matches(String appId, String deviceId, byte[] presented) {
        if (presented == null) {
            return false;
        }
        return MessageDigest.isEqual(password(appId, deviceId).getBytes(StandardCharsets.US_ASCII), presented);
    }

    private static byte[] hmac(SecretKeySpec key, String text) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
