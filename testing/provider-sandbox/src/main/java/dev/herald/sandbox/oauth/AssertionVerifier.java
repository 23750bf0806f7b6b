package dev.herald.sandbox.oauth;

import dev.herald.sandbox.demo.DemoCredentials;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.time.Duration;
import java.util.Base64;
import org.springframework.stereotype.Component;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Checks a JWT-bearer assertion as Google's token endpoint does, as far as the sandbox can:
 * three base64url parts, header {@code alg} RS256, claims iss/aud/exp/iat/scope present, a
 * lifetime of at most an hour that has not ended. The signature is verified when the header's
 * {@code kid} is the demo service account's key id; other keys (for example the demo key of an
 * earlier run, still registered in the platform) cannot be checked and are accepted.
 */
@Component
class AssertionVerifier {
    /** Google's wording for time problems, which clients log verbatim. */
    static final String BAD_TIMES = "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable"
            + " timeframe. Check your iat and exp values in the JWT claim.";
    private static final long MAX_LIFETIME_SECONDS = Duration.ofHours(1).toSeconds();
    private static final long CLOCK_SKEW_SECONDS = 300;

    private final DemoCredentials demo;
    private final JsonMapper json;

    AssertionVerifier(DemoCredentials demo, JsonMapper json) {
        this.demo = demo;
        this.json = json;
    }

    /** Null when the assertion is acceptable, else the {@code error_description} to refuse it with. */
    String problem(String assertion) {
        String[] parts = assertion.split("\\.", -1);
        if (parts.length != 3) {
            return "Invalid JWT: expected three dot-separated parts, found " + parts.length + ".";
        }
        JsonNode header;
        JsonNode claims;
        byte[] signature;
        try {
            Base64.Decoder decoder = Base64.getUrlDecoder();
            header = json.readTree(decoder.decode(parts[0]));
            claims = json.readTree(decoder.decode(parts[1]));
            signature = decoder.decode(parts[2]);
        } catch (IllegalArgumentException | JacksonException e) {
            return "Invalid JWT: a part is not base64url-encoded JSON.";
        }
        if (!"RS256".equals(header.path("alg").asString(""))) {
            return "Invalid JWT: header alg must be RS256.";
        }
        for (String claim : new String[] {"iss", "aud", "exp", "iat", "scope"}) {
            if (claims.path(claim).isMissingNode() || claims.path(claim).isNull()) {
                return "Invalid JWT: claim " + claim + " is missing.";
            }
        }
        long now = System.currentTimeMillis() / 1000;
        long iat = claims.path("iat").asLong(-1);
        long exp = claims.path("exp").asLong(-1);
        if (iat < 0 || exp <= iat || exp - iat > MAX_LIFETIME_SECONDS || exp < now - CLOCK_SKEW_SECONDS
                || iat > now + CLOCK_SKEW_SECONDS) {
            return BAD_TIMES;
        }
        if (demo.privateKeyId().equals(header.path("kid").asString("")) && !signedByDemoKey(parts, signature)) {
            return "Invalid JWT Signature.";
        }
        return null;
    }

    private boolean signedByDemoKey(String[] parts, byte[] signature) {
        try {
            Signature verifier = Signature.getInstance("SHA256withRSA");
            verifier.initVerify(demo.serviceAccountPublicKey());
            verifier.update((parts[0] + "." + parts[1]).getBytes(StandardCharsets.US_ASCII));
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }
}
