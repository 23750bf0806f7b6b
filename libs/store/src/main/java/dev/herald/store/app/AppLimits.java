package dev.herald.store.app;

/**
 * An app's own rate limits, set through the admin API; a null field means the service's default
 * (the gateway's {@code herald.gateway.quota.*}, the dispatcher's {@code herald.dispatcher.api-rate-limit}).
 *
 * @param fcmPerMinute  FCM messages a minute across every gateway replica (FCM's quota is per project)
 * @param apnsPerMinute APNs notifications a minute across every gateway replica
 * @param apiPerSecond  API requests a second to the dispatcher
 */
public record AppLimits(Long fcmPerMinute, Long apnsPerMinute, Long apiPerSecond) {
    public static final AppLimits DEFAULTS = new AppLimits(null, null, null);
}
