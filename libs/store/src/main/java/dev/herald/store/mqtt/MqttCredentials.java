package dev.herald.store.mqtt;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.OptionalLong;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The per-device MQTT password: an HMAC-SHA256 of {@code <app>/<device>} (ids may contain
 * {@code :} but never {@code /}, so no two app-device pairs share a text) under a key derived from the
 * platform's crypto key. The dispatcher issues it at registration; the connection manager checks it
 * at CONNECT by recomputing it, so no secret is stored. A device's password is stable across
 * re-registrations (rotating the crypto key rotates them all).
 *
 * <p>Revocation ({@link CredentialGenerations}): each device has a generation, 0 until its first
 * revocation. A password of generation {@code n > 0} is {@code <n>.<HMAC of <app>/<device>/<n>>}, so
 * the connection manager learns from the password which generation it claims and checks in the same
 * Redis step that claims the session that this is still the device's generation. Generation 0 keeps
 * the plain HMAC, the form every device had before revocation existed.
 *
 * <p>Key rotation: passwords are issued under the current crypto key; one derived from a previous key
 * ({@code herald.crypto-previous-keys}) is still accepted, so devices keep connecting until they
 * fetched their new password (registration or read) and the previous key is removed.
 */
public final class MqttCredentials {
    private static final String ALGORITHM = "HmacSHA256";
    /** The key passwords are issued under, then the previous ones (still accepted). */
    private final List<SecretKeySpec> keys;

    /** @param cryptoKey base64 of the platform's 32-byte crypto key (HERALD_CRYPTO_KEY) */
    public MqttCredentials(String cryptoKey) {
        this(cryptoKey, List.of());
    }

    /** @param previousKeys keys {@code cryptoKey} replaced: passwords derived from them are still accepted */
    public MqttCredentials(String cryptoKey, List<String> previousKeys) {
        if (cryptoKey == null || cryptoKey.isBlank()) {
            throw new IllegalArgumentException("herald.crypto-key is required to issue and check MQTT device passwords");
        }
        this.keys = java.util.stream.Stream.concat(java.util.stream.Stream.of(cryptoKey), previousKeys.stream())
                .filter(k -> k != null && !k.isBlank()).map(MqttCredentials::passwordKey).toList();
    }

    /** A key of its own, so a device password reveals nothing about the key that encrypts credentials. */
    private static SecretKeySpec passwordKey(String cryptoKey) {
        return new SecretKeySpec(hmac(new SecretKeySpec(Base64.getDecoder().decode(cryptoKey.trim()), ALGORITHM),
                "herald-mqtt-device-password-v1"), ALGORITHM);
    }

    /** The password of this device at its first generation (never revoked). */
    public String password(String appId, String deviceId) {
        return password(appId, deviceId, 0);
    }

    /** The password of this device at the given generation. */
    public String password(String appId, String deviceId, long generation) {
        return password(keys.getFirst(), appId, deviceId, generation);
    }

    private static String password(SecretKeySpec key, String appId, String deviceId, long generation) {
        if (generation == 0) {
            return Base64.getUrlEncoder().withoutPadding().encodeToString(hmac(key, appId + "/" + deviceId));
        }
        return generation + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(hmac(key, appId + "/" + deviceId + "/" + generation));
    }

    /** Constant-time check of a password a device presented, at the given generation, under any of the keys. */
    public boolean matches(String appId, String deviceId, long generation, byte[] presented) {
        if (presented == null) {
            return false;
        }
        boolean matched = false;
        for (SecretKeySpec key : keys) {
            matched |= MessageDigest.isEqual(password(key, appId, deviceId, generation).getBytes(StandardCharsets.US_ASCII), presented);
        }
        return matched;
    }

    /**
     * The generation a presented password was issued for, if it is a password of this device at
     * all (whether that generation is still current is Redis's to say: {@link DeviceSessions#claim}).
     */
    public OptionalLong generation(String appId, String deviceId, byte[] presented) {
        if (presented == null) {
            return OptionalLong.empty();
        }
        long generation = 0;
        int dot = indexOf(presented, (byte) '.');
        if (dot > 0) {
            try {
                generation = Long.parseLong(new String(presented, 0, dot, StandardCharsets.US_ASCII));
            } catch (NumberFormatException e) {
                return OptionalLong.empty();
            }
        }
        return generation >= 0 && matches(appId, deviceId, generation, presented) ? OptionalLong.of(generation) : OptionalLong.empty();
    }

    private static int indexOf(byte[] bytes, byte wanted) {
        // The generation has at most 19 digits: look no further.
        for (int i = 0; i < Math.min(bytes.length, 20); i++) {
            if (bytes[i] == wanted) {
                return i;
            }
        }
        return -1;
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
