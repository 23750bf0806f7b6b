package dev.herald.store.app;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * An app (tenant): its API keys, provider credentials and rate limits. {@code version} grows with every change,
 * so provider clients built from a credential can tell that it was replaced.
 */
public record App(String id, String name, Instant createdAt, long version, List<ApiKey> keys,
                  Optional<FcmCredential> fcm, Optional<ApnsCredential> apns, AppLimits limits) {
    public App {
        keys = List.copyOf(keys);
        limits = limits == null ? AppLimits.DEFAULTS : limits;
    }

    public App(String id, String name, Instant createdAt, long version, List<ApiKey> keys,
               Optional<FcmCredential> fcm, Optional<ApnsCredential> apns) {
        this(id, name, createdAt, version, keys, fcm, apns, AppLimits.DEFAULTS);
    }
}
