package dev.herald.sandbox.apns;

import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.ConcurrentHashMap;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Checks APNs provider tokens (the ES256 JWT in {@code authorization: bearer ...}): three base64url
 * parts, header {@code alg} ES256 with a {@code kid}, claims {@code iss} and {@code iat}, and an
 * {@code iat} no older than an hour, as Apple does.
 * <p>
 * The signature is not verified: the demo key is regenerated at every start, and credentials
 * registered against an earlier run must keep working. Results are cached per token because a
 * client reuses one token for tens of minutes and this runs for every push.
 */
final class ProviderTokens {
    private static final long MAX_AGE_SECONDS = Duration.ofHours(1).toSeconds();
    private static final int CACHE_LIMIT = 10_000;
    private static final long MALFORMED = Long.MIN_VALUE;

    private final JsonMapper json;
    /** token -> iat in epoch seconds, or MALFORMED. */
    private final ConcurrentHashMap<String, Long> issuedAt = new ConcurrentHashMap<>();

    ProviderTokens(JsonMapper json) {
        this.json = json;
    }

    /** Null when the token is acceptable, else the reason to reject it with. */
    ApnsReason check(String authorization) {
        if (authorization == null || authorization.isBlank()) {
            return ApnsReason.MissingProviderToken;
        }
        if (!authorization.regionMatches(true, 0, "bearer ", 0, 7)) {
            return ApnsReason.InvalidProviderToken;
        }
        String token = authorization.substring(7).trim();
        Long iat = issuedAt.get(token);
        if (iat == null) {
            if (issuedAt.size() >= CACHE_LIMIT) {
                issuedAt.clear(); // crude bound; only a flood of distinct tokens gets here
            }
            iat = parse(token);
            issuedAt.put(token, iat);
        }
        if (iat == MALFORMED) {
            return ApnsReason.InvalidProviderToken;
        }
        return System.currentTimeMillis() / 1000 - iat > MAX_AGE_SECONDS ? ApnsReason.ExpiredProviderToken : null;
    }

    private long parse(String token) {
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3 || parts[2].isEmpty()) {
            return MALFORMED;
        }
        try {
            Base64.Decoder decoder = Base64.getUrlDecoder();
            JsonNode header = json.readTree(decoder.decode(parts[0]));
            JsonNode claims = json.readTree(decoder.decode(parts[1]));
            decoder.decode(parts[2]);
            boolean wellFormed = "ES256".equals(header.path("alg").asString(""))
                    && header.path("kid").isString()
                    && claims.path("iss").isString()
                    && claims.path("iat").isIntegralNumber();
            return wellFormed ? claims.path("iat").asLong() : MALFORMED;
        } catch (IllegalArgumentException | JacksonException e) {
            return MALFORMED;
        }
    }
}
