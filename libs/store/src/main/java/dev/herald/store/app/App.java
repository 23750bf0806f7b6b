package dev.herald.store.app;

import dev.herald.store.webpush.WebPushCredential;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An app (tenant): its API keys, provider credentials (FCM, APNs, its VAPID key pair for Web Push) and rate limits. {@code version} grows with every change,
 * so provider clients built from a credential can tell that it was replaced.
 *
 * @param credentialsSetAt when each provider's credential ({@code fcm}, {@code apns}, {@code webpush}) was last stored
 */
public record App(String id, String name, Instant createdAt, long version, List<ApiKey> keys,
                  Optional<FcmCredential> fcm, Optional<ApnsCredential> apns, AppLimits limits,
                  Optional<WebPushCredential> webpush, Map<String, Instant> credentialsSetAt) {
    public App {
        keys = List.copyOf(keys);
        limits = limits == null ? AppLimits.DEFAULTS : limits;
        webpush = webpush == null ? Optional.empty() : webpush;
        credentialsSetAt = Map.copyOf(credentialsSetAt);
    }

    public App(String id, String name, Instant createdAt, long version, List<ApiKey> keys,
               Optional<FcmCredential> fcm, Optional<ApnsCredential> apns, AppLimits limits) {
        this(id, name, createdAt, version, keys, fcm, apns, limits, Optional.empty(), Map.of());
    }

    public App(String id, String name, Instant createdAt, long version, List<ApiKey> keys,
               Optional<FcmCredential> fcm, Optional<ApnsCredential> apns) {
        this(id, name, createdAt, version, keys, fcm, apns, AppLimits.DEFAULTS);
    }
}
