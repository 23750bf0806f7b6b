package dev.herald.store.webpush;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.Signature;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.util.Objects;

/**
 * An app's VAPID key pair (RFC 8292): the gateway signs each push service's JWT with the private
 * key, and the browser subscribed with the public key as {@code applicationServerKey}, so a push
 * service takes pushes for a subscription only from its app. {@code privateKey} is secret: stored
 * encrypted like the other credentials and left out of {@link #toString()}.
 *
 * @param privateKey the 32-byte scalar, base64url
 * @param publicKey  the 65-byte uncompressed point, base64url
 * @param subject    the JWT's {@code sub} ({@code mailto:} or {@code https:} contact of the sender);
 *                   null: the gateway's {@code herald.gateway.webpush.subject}
 */
public record WebPushCredential(String privateKey, String publicKey, String subject) {
    public WebPushCredential {
        Objects.requireNonNull(privateKey, "privateKey");
        Objects.requireNonNull(publicKey, "publicKey");
    }

    /** A fresh key pair made here (Herald's default for every new app). */
    public static WebPushCredential generate(String subject) {
        KeyPair pair = P256.generate();
        return new WebPushCredential(P256.base64url(P256.encode((ECPrivateKey) pair.getPrivate())),
                P256.base64url(P256.encode((ECPublicKey) pair.getPublic())), subject);
    }

    /**
     * An uploaded pair, checked: both keys decode, the public key belongs to the private one and
     * the subject is a {@code mailto:} or {@code https:} URI.
     *
     * @throws IllegalArgumentException naming the field that is wrong
     */
    public static WebPushCredential checked(String privateKey, String publicKey, String subject) {
        ECPrivateKey secret;
        ECPublicKey open;
        try {
            secret = P256.privateKey(P256.fromBase64url(require(privateKey, "privateKey")));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("privateKey: " + message(e));
        }
        try {
            open = P256.publicKey(P256.fromBase64url(require(publicKey, "publicKey")));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("publicKey: " + message(e));
        }
        if (subject != null && !subject.startsWith("mailto:") && !subject.startsWith("https://")) {
            throw new IllegalArgumentException("subject: must be a mailto: or https: URI");
        }
        if (!pair(secret, open)) {
            throw new IllegalArgumentException("publicKey: is not the public key of privateKey");
        }
        return new WebPushCredential(P256.base64url(P256.encode(secret)), P256.base64url(P256.encode(open)), subject);
    }

    public ECPrivateKey signingKey() {
        return P256.privateKey(P256.fromBase64url(privateKey));
    }

    private static boolean pair(ECPrivateKey secret, ECPublicKey open) {
        try {
            byte[] probe = "herald vapid pair check".getBytes(StandardCharsets.US_ASCII);
            Signature signer = Signature.getInstance("SHA256withECDSA");
            signer.initSign(secret);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance("SHA256withECDSA");
            verifier.initVerify(open);
            verifier.update(probe);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static String require(String value, String field) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(field + ": is required");
        }
        return value.strip();
    }

    private static String message(IllegalArgumentException e) {
        String text = String.valueOf(e.getMessage());
        return text.startsWith("must ") || text.startsWith("is ") ? text : "must be base64url";
    }

    @Override
    public String toString() {
        return "WebPushCredential[publicKey=" + publicKey + ", subject=" + subject + ", privateKey=***]";
    }
}
