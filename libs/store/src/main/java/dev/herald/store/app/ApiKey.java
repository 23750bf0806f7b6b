package dev.herald.store.app;

import java.time.Instant;

/** A stored API key: only the SHA-256 of the secret is kept. */
public record ApiKey(String keyId, String sha256, Instant createdAt) {
}
