package dev.herald.sandbox.webpush;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Checks a push's {@code Authorization: vapid t=<JWT>, k=<key>} as RFC 8292 says a push service
 * does: the JWT is ES256 and its signature verifies with {@code k}; {@code aud} is this service's
 * origin; {@code exp} is in the future and at most 24 hours away; {@code sub} is a {@code mailto:}
 * or {@code https:} contact. Also, as FCM's and Mozilla's services do, {@code k} must be the
 * {@code applicationServerKey} the subscription was made with, when it was made with one.
 */
final class VapidCheck {
    private static final long MAX_EXP_SECONDS = 24 * 3600;

    private final JsonMapper json;

    VapidCheck(JsonMapper json) {
        this.json = json;
    }

    /** The checked header's key {@code k}, base64url. */
    record Verified(String publicKey) {
    }

    /** Why the push is refused: 401 for a missing or bad token, 403 for a key the subscription does not allow. */
    record Refusal(int status, String reason) {
    }

    /** Returns a {@link Verified} or a {@link Refusal}. */
    Object check(String authorization, String audience, String subscriptionKey, long nowSeconds) {
        if (authorization == null || !authorization.regionMatches(true, 0, "vapid ", 0, 6)) {
            return new Refusal(401, "VAPID_MISSING");
        }
        String token = null;
        String key = null;
        for (String parameter : authorization.substring(6).split(",")) {
            String[] pair = parameter.strip().split("=", 2);
            if (pair.length == 2 && pair[0].equals("t")) {
                token = pair[1].strip();
            } else if (pair.length == 2 && pair[0].equals("k")) {
                key = pair[1].strip();
            }
        }
        if (token == null || key == null) {
            return new Refusal(401, "VAPID_MALFORMED");
        }
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) {
            return new Refusal(401, "VAPID_MALFORMED");
        }
        try {
            Base64.Decoder base64url = Base64.getUrlDecoder();
            JsonNode header = json.readTree(base64url.decode(parts[0]));
            JsonNode claims = json.readTree(base64url.decode(parts[1]));
            if (!"ES256".equals(header.path("alg").asString(""))) {
                return new Refusal(401, "VAPID_ALG");
            }
            if (!signatureValid((parts[0] + '.' + parts[1]).getBytes(StandardCharsets.US_ASCII), base64url.decode(parts[2]),
                    P256Keys.point(base64url.decode(key)))) {
                return new Refusal(401, "VAPID_SIGNATURE");
            }
            if (!audience.equals(claims.path("aud").asString(""))) {
                return new Refusal(401, "VAPID_AUDIENCE");
            }
            long exp = claims.path("exp").asLong(0);
            if (!claims.path("exp").isIntegralNumber() || exp <= nowSeconds || exp > nowSeconds + MAX_EXP_SECONDS) {
                return new Refusal(401, "VAPID_EXPIRY");
            }
            String sub = claims.path("sub").asString("");
            if (!sub.startsWith("mailto:") && !sub.startsWith("https:")) {
                return new Refusal(401, "VAPID_SUBJECT");
            }
        } catch (IllegalArgumentException | JacksonException e) {
            return new Refusal(401, "VAPID_MALFORMED");
        }
        if (subscriptionKey != null && !subscriptionKey.equals(key)) {
            return new Refusal(403, "VAPID_KEY_MISMATCH");
        }
        return new Verified(key);
    }

    /** ES256 as JWS has it: the signature is r || s, 32 bytes each. */
    private static boolean signatureValid(byte[] signingInput, byte[] signature, ECPublicKeyParameters key) {
        if (signature.length != 64) {
            return false;
        }
        SHA256Digest sha256 = new SHA256Digest();
        sha256.update(signingInput, 0, signingInput.length);
        byte[] digest = new byte[32];
        sha256.doFinal(digest, 0);
        ECDSASigner verifier = new ECDSASigner();
        verifier.init(false, key);
        return verifier.verifySignature(digest, new BigInteger(1, Arrays.copyOf(signature, 32)),
                new BigInteger(1, Arrays.copyOfRange(signature, 32, 64)));
    }
}
