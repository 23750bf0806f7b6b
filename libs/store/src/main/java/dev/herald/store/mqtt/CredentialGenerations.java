package dev.herald.store.mqtt;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.HeraldFunctions.Function;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Each MQTT device's credential generation ({@code cm:cred:{<app>/<device>}}, absent = 0), which
 * its password is derived from ({@link MqttCredentials}). Revoking moves it on: every password issued
 * before stops working at the next CONNECT ({@link DeviceSessions#claim} checks it), and the
 * dispatcher issues the new generation's password from then on.
 */
public final class CredentialGenerations {
    /** A revocation: the device's new generation, and the connection holding it then, to be closed. */
    public record Revoked(long generation, Optional<DeviceSessions.Holder> connected) {
    }

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;

    public CredentialGenerations(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions) {
        this.redis = redis;
        this.functions = functions;
    }

    /** The device's current generation: the one its password is issued for. */
    public CompletableFuture<Long> current(String appId, String deviceId) {
        return redis.get(RedisKeys.mqttCredentials(appId, deviceId)).toCompletableFuture()
                .thenApply(value -> value == null ? 0L : Long.parseLong(value));
    }

    /** Revokes every password the device was issued so far. */
    public CompletableFuture<Revoked> revoke(String appId, String deviceId) {
        return functions.<List<Object>>call(Function.CREDENTIALS_REVOKE, ScriptOutputType.MULTI,
                        new String[] {RedisKeys.mqttCredentials(appId, deviceId), RedisKeys.mqttSession(appId, deviceId)})
                .thenApply(answer -> new Revoked((Long) answer.get(0), DeviceSessions.Holder.parse((String) answer.get(1))));
    }
}
