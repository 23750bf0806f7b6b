package dev.herald.dispatcher;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * Settings of the Dispatcher ({@code herald.dispatcher.*}): the one place of their defaults, and of
 * their documentation (docs/settings.md is generated from these {@code @param}s).
 *
 * @param adminToken           bearer token of the admin API; required, from the environment or args
 * @param maxPayloadBytes      limit on title + body + data + overrides serialized as JSON (APNs and
 *                             FCM both cap a notification at 4 KB)
 * @param maxTargetsPerRequest tokens or device ids one send may name; larger audiences use a topic
 * @param maxRequestSize       limit on a request body (1000 FCM tokens are ~200 KB); larger ones get 413
 *                             before they are parsed
 * @param idempotencyTtl       how long an {@code Idempotency-Key} is remembered
 * @param defaultTtl           time to live of a send that names none
 * @param maxTtl               longest time to live a send may ask for (FCM allows 28 days)
 * @param publishTimeout       how long a send waits for RabbitMQ's confirms before answering 503
 * @param batchSize            targets per {@code PushBatch} on the send queues
 * @param resolveDevicesUpTo   device lists of at most this many ids are looked up in the registry
 *                             when the send is accepted and queued as batches; longer ones (and
 *                             topics) go to the gateway as an audience job. 0 sends every list there.
 * @param apiRateLimit         API requests a second each app may make, across every dispatcher replica
 *                             (a shared bucket in Redis, a second's worth at once, which each replica takes
 *                             from in leases of at most 20 ms worth); more are answered
 *                             429 with Retry-After. An app's own limit (admin API) wins. 0: no limit
 * @param directMqtt           a send to one MQTT device that is connected (no throttle, not scheduled)
 *                             is put into the device's box and published to its connection-manager
 *                             node by the dispatcher itself, answered 202 on that publish's confirm:
 *                             no send queue and no gateway on the way, the latency path of device
 *                             pushes. Offline devices, and any failed step, take the send queue.
 *                             false: every send takes the send queue
 */
@ConfigurationProperties("herald.dispatcher")
public record DispatcherProperties(
        String adminToken,
        @DefaultValue("4096") int maxPayloadBytes,
        @DefaultValue("1000") int maxTargetsPerRequest,
        @DefaultValue("256KB") DataSize maxRequestSize,
        @DefaultValue("24h") Duration idempotencyTtl,
        @DefaultValue("28d") Duration defaultTtl,
        @DefaultValue("28d") Duration maxTtl,
        @DefaultValue("5s") Duration publishTimeout,
        @DefaultValue("500") int batchSize,
        @DefaultValue("100") int resolveDevicesUpTo,
        @DefaultValue("10000") long apiRateLimit,
        @DefaultValue("true") boolean directMqtt) {

    public DispatcherProperties {
        if (adminToken == null || adminToken.isBlank()) {
            throw new IllegalStateException("herald.dispatcher.admin-token is not set: give the admin API's bearer "
                    + "token by environment (HERALD_DISPATCHER_ADMIN_TOKEN) or --herald.dispatcher.admin-token=...; "
                    + "use a long random value, e.g. `head -c 32 /dev/urandom | base64`");
        }
        if (adminToken.strip().length() < 16) {
            throw new IllegalStateException("herald.dispatcher.admin-token is too short: use at least 16 characters");
        }
        require(maxPayloadBytes > 0, "max-payload-bytes must be positive");
        require(maxTargetsPerRequest > 0, "max-targets-per-request must be positive");
        require(batchSize > 0, "batch-size must be positive");
        require(resolveDevicesUpTo >= 0, "resolve-devices-up-to must not be negative");
        require(apiRateLimit >= 0, "api-rate-limit must not be negative");
        require(maxRequestSize.toBytes() > 0, "max-request-size must be positive");
        require(!defaultTtl.isNegative() && defaultTtl.compareTo(maxTtl) <= 0,
                "default-ttl must be between 0 and max-ttl (" + maxTtl + "), got " + defaultTtl);
        require(publishTimeout.isPositive(), "publish-timeout must be positive");
        require(idempotencyTtl.toSeconds() > 0, "idempotency-ttl must be at least 1s");
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalStateException("herald.dispatcher." + message);
        }
    }

    @Override
    public String toString() {
        return "DispatcherProperties[adminToken=***, maxPayloadBytes=" + maxPayloadBytes
                + ", maxTargetsPerRequest=" + maxTargetsPerRequest + ", maxRequestSize=" + maxRequestSize
                + ", idempotencyTtl=" + idempotencyTtl + ", defaultTtl=" + defaultTtl + ", maxTtl=" + maxTtl
                + ", publishTimeout=" + publishTimeout + ", batchSize=" + batchSize
                + ", resolveDevicesUpTo=" + resolveDevicesUpTo + ", apiRateLimit=" + apiRateLimit + ", directMqtt=" + directMqtt + "]";
    }
}
