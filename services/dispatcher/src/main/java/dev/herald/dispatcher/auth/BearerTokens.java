package dev.herald.dispatcher.auth;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Optional;
import org.springframework.http.HttpHeaders;

/** Reads {@code Authorization: Bearer <token>} (RFC 6750; the scheme is case-insensitive). */
final class BearerTokens {
    private BearerTokens() {
    }

    static Optional<String> of(HttpServletRequest request) {
        String header = request.getHeader(HttpHeaders.AUTHORIZATION);
        if (header == null || header.length() < 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Optional.empty();
        }
        String token = header.substring(7).strip();
        return token.isEmpty() ? Optional.empty() : Optional.of(token);
    }
}
