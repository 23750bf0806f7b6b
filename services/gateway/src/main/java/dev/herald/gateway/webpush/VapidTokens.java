package dev.herald.gateway.webpush;

import dev.herald.store.app.App;
import dev.herald.store.webpush.P256;
import dev.herald.store.webpush.WebPushCredential;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import tools.jackson.databind.json.JsonMapper;

/**
 * RFC 8292 VAPID {@code Authorization} headers: {@code vapid t=<JWT>, k=<public key>}, the JWT
 * signed ES256 with the app's private key and claiming {@code aud} (the push service's origin),
 * {@code exp} and {@code sub}. One header is reused per app, key version and push service until
 * shortly before it expires: push services see the same token for hours, and signing stays off the
 * per-message path.
 */
final class VapidTokens {
    private static final String HEADER = P256.base64url("{\"typ\":\"JWT\",\"alg\":\"ES256\"}".getBytes(StandardCharsets.UTF_8));
    private static final int CACHE_LIMIT = 10_000;

    private final Clock clock;
    private final Duration lifetime;
    private final String defaultSubject;
    private final JsonMapper json;
    private final ConcurrentHashMap<String, Issued> issued = new ConcurrentHashMap<>();

    private record Issued(String authorization, Instant renewAt) {
    }

    /**
     * @param lifetime       the JWT's {@code exp} from now (RFC 8292: at most 24 hours)
     * @param defaultSubject {@code sub} for apps whose key pair names none
     */
    VapidTokens(Clock clock, Duration lifetime, String defaultSubject, JsonMapper json) {
        this.clock = clock;
        this.lifetime = lifetime;
        this.defaultSubject = defaultSubject;
        this.json = json;
    }

    /** The {@code Authorization} header for a push to {@code endpoint}. */
    String authorization(App app, WebPushCredential credential, URI endpoint) {
        String audience = origin(endpoint);
        String key = app.id() + '\u0000' + app.version() + '\u0000' + audience;
        Instant now = clock.instant();
        Issued current = issued.get(key);
        if (current == null || !now.isBefore(current.renewAt())) {
            if (issued.size() >= CACHE_LIMIT) {
                issued.clear(); // only many apps times many push services get here; they are re-signed
            }
            current = new Issued(sign(credential, audience, now), now.plus(lifetime.dividedBy(2)));
            issued.put(key, current);
        }
        return current.authorization();
    }

    private String sign(WebPushCredential credential, String audience, Instant now) {
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("aud", audience);
        claims.put("exp", now.plus(lifetime).getEpochSecond());
        claims.put("sub", credential.subject() != null ? credential.subject() : defaultSubject);
        String signingInput = HEADER + '.' + P256.base64url(json.writeValueAsBytes(claims));
        try {
            // JWS wants the signature as r || s (P1363), not DER.
            Signature es256 = Signature.getInstance("SHA256withECDSAinP1363Format");
            es256.initSign(credential.signingKey());
            es256.update(signingInput.getBytes(StandardCharsets.US_ASCII));
            return "vapid t=" + signingInput + '.' + P256.base64url(es256.sign()) + ", k=" + credential.publicKey();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("VAPID signing failed", e);
        }
    }

    /** {@code scheme://host[:port]}: the audience a push service checks. */
    static String origin(URI endpoint) {
        return endpoint.getScheme() + "://" + endpoint.getRawAuthority();
    }
}
