package dev.herald.store.webpush;

import java.net.URI;
import java.util.Objects;

/**
 * A browser's PushSubscription: where to POST (the push service's {@code endpoint}) and the keys
 * the payload is encrypted to (RFC 8291: {@code p256dh}, the browser's P-256 public key, and the
 * 16-byte {@code auth} secret), all as {@code PushSubscription.toJSON()} gives them.
 *
 * <p>Herald carries a subscription wherever other channels carry a token (device registry, batches,
 * status keys), as {@link #token()}: {@code <p256dh>:<auth>:<endpoint>}. base64url has no
 * {@code :}, so the first two separators split it whatever the endpoint holds.
 */
public record WebPushSubscription(URI endpoint, String p256dh, String auth) {
    public static final int AUTH_BYTES = 16;

    public WebPushSubscription {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(p256dh, "p256dh");
        Objects.requireNonNull(auth, "auth");
    }

    public String token() {
        return p256dh + ':' + auth + ':' + endpoint;
    }

    /** @throws IllegalArgumentException when {@code token} is not one {@link #token()} made */
    public static WebPushSubscription fromToken(String token) {
        int first = token.indexOf(':');
        int second = first < 0 ? -1 : token.indexOf(':', first + 1);
        if (second < 0) {
            throw new IllegalArgumentException("not a Web Push subscription token");
        }
        return new WebPushSubscription(URI.create(token.substring(second + 1)), token.substring(0, first),
                token.substring(first + 1, second));
    }

    /** The browser's public key; @throws IllegalArgumentException when it is not a P-256 point */
    public byte[] publicKey() {
        byte[] point = P256.fromBase64url(p256dh);
        P256.publicKey(point);
        return point;
    }

    /** The auth secret; @throws IllegalArgumentException when it is not 16 bytes of base64url */
    public byte[] authSecret() {
        byte[] secret = P256.fromBase64url(auth);
        if (secret.length != AUTH_BYTES) {
            throw new IllegalArgumentException("must be 16 bytes, base64url");
        }
        return secret;
    }
}
