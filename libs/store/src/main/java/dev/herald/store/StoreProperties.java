package dev.herald.store;

import dev.herald.store.device.TokenLifecycle;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Where the shared state lives and how long it is kept.
 *
 * @param redisUri      Redis holding apps, devices, topics, idempotency keys and message status:
 *                      {@code redis://host:port}, Sentinel as {@code redis-sentinel://host:port[,host:port]#master},
 *                      or with {@code redisCluster} the cluster's seed nodes, comma-separated
 * @param redisCluster  whether {@code redisUri} names a Redis Cluster (libs/store/README.md)
 * @param cryptoKey     base64 of 32 random bytes; encrypts provider credentials at rest (AES-256-GCM).
 *                      Required: without it credentials could not be stored safely.
 * @param statusTtl     how long a message's status stays readable after it was accepted
 * @param appCacheTtl   upper bound on how stale the local app cache may get if an invalidation is missed
 * @param mqttBoxSize   most messages kept per MQTT device waiting for its PUBACK; the oldest is dropped
 * @param tokens        when device tokens are stale and when they are removed
 */
@ConfigurationProperties("herald")
public record StoreProperties(
        @DefaultValue("redis://127.0.0.1:6379") String redisUri,
        @DefaultValue("false") boolean redisCluster,
        String cryptoKey,
        @DefaultValue("7d") Duration statusTtl,
        @DefaultValue("5m") Duration appCacheTtl,
        @DefaultValue("100") int mqttBoxSize,
        @DefaultValue TokenLifecycle tokens) {
}
