package dev.herald.store;

import java.time.Duration;
import java.util.List;
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
 *                      Required: without it credentials could not be stored safely. MQTT device
 *                      passwords derive from it too. To rotate it, see {@code cryptoPreviousKeys}
 * @param cryptoPreviousKeys keys {@code cryptoKey} replaced (base64, comma-separated): they still
 *                      decrypt credentials stored with them and still accept device passwords derived
 *                      from them, until a re-encryption ({@code POST /v1/admin/credentials/re-encrypt})
 *                      rewrote every credential with the current key and devices fetched new passwords
 * @param statusTtl     how long a message's status stays readable after it was accepted
 * @param outcomeLinger how long a message's target outcomes wait to be recorded together once one
 *                      call for it has gone: the first outcome goes at once, later ones in groups at
 *                      most this far apart (fewer Redis calls in a fan-out, this much later status
 *                      and batch acknowledgement); 0 sends each group as soon as the last call returns
 * @param appCacheTtl   upper bound on how stale the local app cache may get if an invalidation is missed
 * @param mqttBoxSize   most messages kept per MQTT device waiting for its PUBACK; the oldest is dropped.
 *                      Boxes are filled by the gateway and the dispatcher (direct MQTT sends): set it alike on both
 * @param tokens        when device tokens are stale and when they are removed
 * @param fcmTokenHosts hosts an FCM service account's {@code token_uri} may name: the gateway POSTs a
 *                      signed assertion there, and the account comes from a tenant, so any other host
 *                      is refused (the dispatcher refuses the account when it is set, the gateway
 *                      will not use one). Google's; add the provider sandbox's host to test against it
 */
@ConfigurationProperties("herald")
public record StoreProperties(
        @DefaultValue("redis://127.0.0.1:6379") String redisUri,
        @DefaultValue("false") boolean redisCluster,
        String cryptoKey,
        @DefaultValue List<String> cryptoPreviousKeys,
        @DefaultValue("7d") Duration statusTtl,
        @DefaultValue("5ms") Duration outcomeLinger,
        @DefaultValue("5m") Duration appCacheTtl,
        @DefaultValue("100") int mqttBoxSize,
        @DefaultValue Tokens tokens,
        @DefaultValue("oauth2.googleapis.com") List<String> fcmTokenHosts) {

    public StoreProperties {
        cryptoPreviousKeys = cryptoPreviousKeys == null ? List.of() : List.copyOf(cryptoPreviousKeys);
        if (outcomeLinger.isNegative()) {
            throw new IllegalArgumentException("herald.outcome-linger must not be negative: " + outcomeLinger);
        }
    }

    /**
     * When a device's token counts as stale and when it is removed, both measured from its last
     * registration (a re-registration refreshes it). Defaults from Firebase's guidance: a token not
     * refreshed for a month is likely stale; FCM rejects Android tokens inactive for 270 days, so
     * keeping one longer only costs a failed request.
     *
     * @param staleAfter  a device not registered again for this long is stale: fan-outs leave it out
     *                    and the stale-devices API lists it
     * @param removeAfter a device not registered again for this long is removed by the token sweep
     *                    (counted in the app's statistics); longer than {@code staleAfter}
     */
    public record Tokens(@DefaultValue("30d") Duration staleAfter, @DefaultValue("270d") Duration removeAfter) {
        public Tokens {
            if (removeAfter.compareTo(staleAfter) < 0) {
                throw new IllegalArgumentException("herald.tokens.remove-after (" + removeAfter
                        + ") must not be shorter than herald.tokens.stale-after (" + staleAfter + ")");
            }
        }
    }
}
