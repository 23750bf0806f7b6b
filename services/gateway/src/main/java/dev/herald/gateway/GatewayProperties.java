package dev.herald.gateway;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Gateway tuning. Defaults are for one replica of a horizontally scaled deployment: a modest
 * prefetch (KEDA scales replicas by queue depth, so work must stay in the queue, visible, rather
 * than buffered in a few consumers) and a bounded number of provider requests in flight. The
 * endpoints default to the real FCM and APNs; the {@code sandbox} profile
 * ({@code application-sandbox.yaml}) points them at the provider sandbox.
 *
 * @param maxInFlight   provider requests in flight at once across all lanes and providers
 * @param consumers     consumers (and so AMQP channels) per lane
 * @param prefetch      unacknowledged deliveries each consumer may hold; a delivery is a batch of targets.
 *                      Modest, so the backlog stays visible in the queue for autoscaling
 * @param retry         how transient provider failures are retried
 * @param audience      how topic and device-list sends are expanded into batches
 * @param dedupeTtl     how long finished targets are remembered for redelivered batches
 * @param fcm           FCM HTTP v1 endpoint and connection pool
 * @param apns          APNs endpoints and connections
 * @param webpush       Web Push (browsers): connections to push services and the VAPID token
 * @param tokenSweep    the sweep that removes devices whose token went unrefreshed too long
 * @param quota         each app's provider quotas, shared by every replica through Redis (an app's
 *                      own limits, set through the admin API, win over these defaults)
 * @param replicaLease  how long this replica's lease in Redis lives without renewal (renewed every third
 *                      of it, deleted on a graceful stop): the admin's platform view lists the live replicas
 */
@ConfigurationProperties("herald.gateway")
public record GatewayProperties(
        @DefaultValue("512") int maxInFlight,
        @DefaultValue Consumers consumers,
        @DefaultValue("2") int prefetch,
        @DefaultValue Retry retry,
        @DefaultValue Audience audience,
        @DefaultValue Fcm fcm,
        @DefaultValue Apns apns,
        @DefaultValue WebPush webpush,
        @DefaultValue TokenSweep tokenSweep,
        @DefaultValue Quota quota,
        @DefaultValue("10s") Duration replicaLease) {

    /**
     * Consumers per lane: the high lane has its own, so bulk work never occupies them.
     *
     * @param high     consumers of the high-priority send queue
     * @param normal   consumers of the normal-priority send queue
     * @param audience consumers of the audience queue (topic and device-list expansion)
     */
    public record Consumers(@DefaultValue("2") int high, @DefaultValue("2") int normal, @DefaultValue("1") int audience) {
    }

    /**
     * @param maxAttempts    attempts per target, the first included, before it is dead-lettered
     * @param initialBackoff backoff before the second attempt; doubles each time, with full jitter
     * @param maxBackoff     cap on one backoff
     * @param maxRetryAfter  cap on a provider's Retry-After (a bigger one dead-letters the target now)
     */
    public record Retry(@DefaultValue("5") int maxAttempts, @DefaultValue("500ms") Duration initialBackoff,
                        @DefaultValue("30s") Duration maxBackoff, @DefaultValue("60s") Duration maxRetryAfter) {
    }

    /**
     * @param interval how often one replica sweeps (the others skip while its lease lives); the
     *                 ages are {@code herald.tokens.*}
     * @param pageSize devices removed per step of an app's sweep
     */
    public record TokenSweep(@DefaultValue("1h") Duration interval, @DefaultValue("500") int pageSize) {
    }

    /**
     * @param pageSize  subscribers read from Redis per step
     * @param batchSize targets per published batch
     */
    public record Audience(@DefaultValue("1000") int pageSize, @DefaultValue("500") int batchSize) {
    }

    /**
     * @param endpoint       FCM base URL (the {@code sandbox} profile: the provider sandbox). An
     *                       http:// URL is spoken as h2c.
     * @param connections    HTTP/2 connections in the pool; each multiplexes many requests (as many
     *                       as the server allows at once: 100 is usual), so with the default 512 in
     *                       flight fewer than 6 would hold the rest back in the pool
     * @param requestTimeout time allowed for one request before it counts as a transport failure
     */
    public record Fcm(@DefaultValue("https://fcm.googleapis.com") URI endpoint, @DefaultValue("6") int connections,
                      @DefaultValue("10s") Duration requestTimeout) {
    }

    /**
     * @param sandboxEndpoint    APNs for apps whose credential says {@code sandbox} (Apple's development
     *                           environment, not the provider sandbox)
     * @param productionEndpoint APNs for {@code production} credentials
     * @param trustedCertificate PEM file of the server certificate to trust instead of the JDK's
     *                           roots; unset for Apple, the provider sandbox's in the {@code sandbox} profile
     * @param connections        connections per credential (Pushy: gains stop near 16)
     */
    public record Apns(@DefaultValue("https://api.sandbox.push.apple.com:443") URI sandboxEndpoint,
                       @DefaultValue("https://api.push.apple.com:443") URI productionEndpoint,
                       Path trustedCertificate,
                       @DefaultValue("2") int connections) {
    }

    /**
     * @param connectionsPerHost connections to one push service host (FCM's, Mozilla's, Apple's, ...);
     *                           HTTP/2 multiplexes many requests over each where the service offers it
     * @param requestTimeout     time allowed for one request before it counts as a transport failure
     * @param vapidLifetime      the VAPID JWT's {@code exp} from its signing (RFC 8292 allows 24 hours);
     *                           one token is reused for half of it
     * @param subject            the VAPID {@code sub} (a {@code mailto:} or {@code https:} contact the
     *                           push service can reach the sender at) for apps whose key pair names none
     */
    public record WebPush(@DefaultValue("16") int connectionsPerHost, @DefaultValue("10s") Duration requestTimeout,
                          @DefaultValue("12h") Duration vapidLifetime,
                          @DefaultValue("mailto:webpush@herald.invalid") String subject) {
        public WebPush {
            if (vapidLifetime.compareTo(Duration.ofHours(24)) > 0 || !vapidLifetime.isPositive()) {
                throw new IllegalArgumentException("herald.gateway.webpush.vapid-lifetime must be positive and at most 24h (RFC 8292)");
            }
        }
    }

    /**
     * @param fcmPerMinute  FCM messages a minute per app across all replicas: FCM's published quota is
     *                      600,000 a minute per project. 0: no limit (429s still pause the app)
     * @param apnsPerMinute APNs notifications a minute per app across all replicas. Apple publishes no
     *                      rate, so 0: no limit, and its 429 TooManyRequests pauses the app instead
     * @param defaultPause  how long an app pauses sending to a provider after a 429 that names no
     *                      Retry-After (APNs never does)
     * @param maxPause      cap on one pause, however long a Retry-After asks for
     */
    public record Quota(@DefaultValue("600000") long fcmPerMinute, @DefaultValue("0") long apnsPerMinute,
                        @DefaultValue("1s") Duration defaultPause, @DefaultValue("60s") Duration maxPause) {
    }
}
