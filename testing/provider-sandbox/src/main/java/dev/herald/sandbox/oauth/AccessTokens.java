package dev.herald.sandbox.oauth;

import dev.herald.sandbox.SandboxProperties;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Component;

/**
 * The access tokens this sandbox issued and when they expire. FCM accepts only these, so a
 * gateway that skips the OAuth exchange or keeps an expired token gets 401 as it would from Google.
 * Tokens survive {@code POST /sandbox/reset}: a reset must not log the gateway out.
 */
@Component
public class AccessTokens {
    public static final String PREFIX = "sandbox-";
    /** Expired tokens are swept only past this many, so issuing stays cheap. */
    private static final int SWEEP_ABOVE = 10_000;

    private final SecureRandom random = new SecureRandom();
    private final ConcurrentHashMap<String, Long> expiresAtMillis = new ConcurrentHashMap<>();
    private final Duration ttl;

    public AccessTokens(SandboxProperties properties) {
        this.ttl = properties.accessTokenTtl();
    }

    public Duration ttl() {
        return ttl;
    }

    public String issue() {
        long now = System.currentTimeMillis();
        if (expiresAtMillis.size() > SWEEP_ABOVE) {
            expiresAtMillis.values().removeIf(expiry -> expiry < now);
        }
        byte[] bytes = new byte[24];
        random.nextBytes(bytes);
        String token = PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        expiresAtMillis.put(token, now + ttl.toMillis());
        return token;
    }

    /** True for a token this sandbox issued that has not expired. */
    public boolean valid(String token) {
        Long expiry = token == null ? null : expiresAtMillis.get(token);
        return expiry != null && expiry > System.currentTimeMillis();
    }
}
