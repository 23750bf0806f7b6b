package dev.herald.store.app;

import dev.herald.store.crypto.CredentialCipher;
import dev.herald.store.crypto.CredentialKeyException;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.webpush.WebPushCredential;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import tools.jackson.databind.json.JsonMapper;

/**
 * Apps in Redis, one hash per app ({@code app:{<id>}}): name, version, API key hashes
 * ({@code key:<keyId>}) encrypted credentials ({@code cred:fcm}, {@code cred:apns}, {@code cred:webpush}) and rate limits ({@code limits}, JSON). Every change
 * bumps the version and publishes the app id on {@value #CHANGES_CHANNEL} so local caches drop it.
 * Reads on the hot path go through {@link AppCache}, not here.
 */
public final class AppStore {
    public static final String CHANGES_CHANNEL = RedisKeys.APP_CHANGES_CHANNEL;
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String WEBPUSH_FIELD = "cred:webpush";

    private final RedisClusterAsyncCommands<String, String> redis;
    private final HeraldFunctions functions;
    private final CredentialCipher cipher;
    private final Clock clock;

    public AppStore(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, CredentialCipher cipher, Clock clock) {
        this.redis = redis;
        this.functions = functions;
        this.cipher = cipher;
        this.clock = clock;
    }

    private static String key(String appId) {
        return RedisKeys.app(appId);
    }

    /**
     * Creates the app with a first API key and a VAPID key pair of its own (Web Push works without
     * a credential upload); empty if an app with this id exists.
     */
    public CompletableFuture<Optional<ApiKeys.Issued>> create(String appId, String name) {
        ApiKeys.Issued issued = ApiKeys.issue();
        String vapid = sealedWebPush(appId, WebPushCredential.generate(null));
        return redis.hsetnx(key(appId), "name", name).toCompletableFuture().thenCompose(created -> {
            if (!created) {
                return CompletableFuture.completedFuture(Optional.<ApiKeys.Issued>empty());
            }
            return redis.hset(key(appId), Map.of("createdAt", clock.instant().toString(), "version", "0"))
                    .toCompletableFuture()
                    .thenCompose(ignored -> change(appId, Map.of(keyField(issued.keyId()), keyValue(issued),
                            WEBPUSH_FIELD, vapid), List.of()))
                    .thenApply(version -> Optional.of(issued));
        });
    }

    /** Adds a key (rotation: add the new one, move clients, then revoke the old). Empty if the app is unknown. */
    public CompletableFuture<Optional<ApiKeys.Issued>> addKey(String appId) {
        ApiKeys.Issued issued = ApiKeys.issue();
        return change(appId, Map.of(keyField(issued.keyId()), keyValue(issued)), List.of())
                .thenApply(changed -> changed ? Optional.of(issued) : Optional.empty());
    }

    public CompletableFuture<Boolean> revokeKey(String appId, String keyId) {
        return redis.hexists(key(appId), keyField(keyId)).toCompletableFuture().thenCompose(exists -> exists
                ? change(appId, Map.of(), List.of(keyField(keyId)))
                : CompletableFuture.completedFuture(false));
    }

    public CompletableFuture<Boolean> setFcm(String appId, FcmCredential credential) {
        return change(appId, Map.of("cred:fcm", cipher.encrypt(JSON.writeValueAsString(credential), appId),
                "credAt:fcm", clock.instant().toString()), List.of());
    }

    public CompletableFuture<Boolean> setApns(String appId, ApnsCredential credential) {
        return change(appId, Map.of("cred:apns", cipher.encrypt(JSON.writeValueAsString(credential), appId),
                "credAt:apns", clock.instant().toString()), List.of());
    }

    /** Replaces the app's VAPID key pair (a generated one, or the app's own). False if the app is unknown. */
    public CompletableFuture<Boolean> setWebPush(String appId, WebPushCredential credential) {
        return change(appId, Map.of(WEBPUSH_FIELD, sealedWebPush(appId, credential),
                "credAt:webpush", clock.instant().toString()), List.of());
    }

    private String sealedWebPush(String appId, WebPushCredential credential) {
        return cipher.encrypt(JSON.writeValueAsString(credential), appId);
    }

    /** Replaces the app's rate limits; empty fields go back to the defaults. False if the app is unknown. */
    public CompletableFuture<Boolean> setLimits(String appId, AppLimits limits) {
        return change(appId, Map.of("limits", JSON.writeValueAsString(limits)), List.of());
    }

    /** Removes a credential; {@code provider} is {@code fcm}, {@code apns} or {@code webpush}. */
    public CompletableFuture<Boolean> clearCredential(String appId, String provider) {
        return change(appId, Map.of(), List.of("cred:" + provider, "credAt:" + provider));
    }

    /**
     * What a re-encryption did: fields rewritten with the current key, fields already under it, and
     * {@code <app>/<field>} of those no configured key opens (their key is still needed).
     */
    public record Reencryption(int apps, int reencrypted, int current, List<String> undecryptable) {
    }

    /**
     * Rewrites every stored credential of every app with the cipher's current key (a SCAN over the
     * apps: an operator's occasional command). A credential replaced while this runs keeps the new value.
     */
    public CompletableFuture<Reencryption> reencryptAll() {
        Reencryption[] total = {new Reencryption(0, 0, 0, List.of())};
        return reencryptFrom(ScanCursor.INITIAL, total).thenApply(done -> total[0]);
    }

    private CompletableFuture<Void> reencryptFrom(ScanCursor cursor, Reencryption[] total) {
        ScanArgs match = ScanArgs.Builder.matches(RedisKeys.KeyPattern.APP.glob()).limit(500);
        return redis.scan(cursor, match).toCompletableFuture().thenCompose(page -> {
            CompletableFuture<Void> apps = CompletableFuture.completedFuture(null);
            for (String key : page.getKeys()) {
                String appId = key.substring(key.indexOf('{') + 1, key.lastIndexOf('}'));
                apps = apps.thenCompose(ignored -> reencrypt(appId)).thenAccept(one -> {
                    List<String> undecryptable = new ArrayList<>(total[0].undecryptable());
                    undecryptable.addAll(one.undecryptable());
                    total[0] = new Reencryption(total[0].apps() + 1, total[0].reencrypted() + one.reencrypted(),
                            total[0].current() + one.current(), List.copyOf(undecryptable));
                });
            }
            return apps.thenCompose(done -> page.isFinished() ? CompletableFuture.<Void>completedFuture(null)
                    : reencryptFrom(page, total));
        });
    }

    /** Rewrites one app's credentials with the current key. */
    public CompletableFuture<Reencryption> reencrypt(String appId) {
        return redis.hgetall(key(appId)).toCompletableFuture().thenCompose(fields -> {
            List<String> args = new ArrayList<>();
            List<String> undecryptable = new ArrayList<>();
            int current = 0;
            for (Map.Entry<String, String> field : fields.entrySet()) {
                if (!field.getKey().startsWith("cred:")) {
                    continue;
                }
                if (cipher.isCurrent(field.getValue())) {
                    current++;
                    continue;
                }
                try {
                    args.addAll(List.of(field.getKey(), field.getValue(), cipher.reencrypt(field.getValue(), appId)));
                } catch (CredentialKeyException e) {
                    undecryptable.add(appId + "/" + field.getKey());
                }
            }
            int alreadyCurrent = current;
            if (args.isEmpty()) {
                return CompletableFuture.completedFuture(new Reencryption(1, 0, alreadyCurrent, undecryptable));
            }
            return functions.<Long>call(HeraldFunctions.Function.APP_RESEAL, ScriptOutputType.INTEGER, new String[] {key(appId)},
                            args.toArray(String[]::new))
                    .thenApply(replaced -> new Reencryption(1, replaced.intValue(), alreadyCurrent, undecryptable));
        });
    }

    public CompletableFuture<Optional<App>> load(String appId) {
        return redis.hgetall(key(appId)).toCompletableFuture().thenApply(fields -> fields.isEmpty()
                ? Optional.empty() : Optional.of(decode(appId, fields)));
    }

    private CompletableFuture<Boolean> change(String appId, Map<String, String> set, List<String> delete) {
        List<String> args = new ArrayList<>();
        args.add(CHANGES_CHANNEL);
        args.add(appId);
        args.add(String.valueOf(set.size()));
        set.forEach((field, value) -> {
            args.add(field);
            args.add(value);
        });
        args.addAll(delete);
        return functions.<Long>call(HeraldFunctions.Function.APP_UPDATE, ScriptOutputType.INTEGER, new String[] {key(appId)},
                        args.toArray(String[]::new))
                .thenApply(version -> version != null);
    }

    private App decode(String appId, Map<String, String> fields) {
        List<ApiKey> keys = new ArrayList<>();
        fields.forEach((field, value) -> {
            if (field.startsWith("key:")) {
                String[] parts = value.split("\\|", 2);
                keys.add(new ApiKey(field.substring(4), parts[0], Instant.parse(parts[1])));
            }
        });
        Optional<FcmCredential> fcm = Optional.ofNullable(fields.get("cred:fcm"))
                .map(sealed -> JSON.readValue(cipher.decrypt(sealed, appId), FcmCredential.class));
        Optional<ApnsCredential> apns = Optional.ofNullable(fields.get("cred:apns"))
                .map(sealed -> JSON.readValue(cipher.decrypt(sealed, appId), ApnsCredential.class));
        Optional<WebPushCredential> webpush = Optional.ofNullable(fields.get(WEBPUSH_FIELD))
                .map(sealed -> JSON.readValue(cipher.decrypt(sealed, appId), WebPushCredential.class));
        Instant createdAt = fields.containsKey("createdAt") ? Instant.parse(fields.get("createdAt")) : Instant.EPOCH;
        AppLimits limits = Optional.ofNullable(fields.get("limits"))
                .map(stored -> JSON.readValue(stored, AppLimits.class)).orElse(AppLimits.DEFAULTS);
        Map<String, Instant> credentialsSetAt = new java.util.HashMap<>();
        fields.forEach((field, value) -> {
            if (field.startsWith("credAt:")) {
                credentialsSetAt.put(field.substring(7), Instant.parse(value));
            }
        });
        return new App(appId, fields.get("name"), createdAt, Long.parseLong(fields.getOrDefault("version", "0")),
                keys, fcm, apns, limits, webpush, credentialsSetAt);
    }

    private static String keyField(String keyId) {
        return "key:" + keyId;
    }

    private String keyValue(ApiKeys.Issued issued) {
        return issued.sha256() + "|" + clock.instant();
    }

    /**
     * Sets ({@code timeZone} present) or clears the app's default IANA time zone: the zone of its
     * devices that registered none, for sends at a local time (UTC when unset). False if the app is unknown.
     */
    public CompletableFuture<Boolean> setTimeZone(String appId, Optional<String> timeZone) {
        return timeZone.map(zone -> change(appId, Map.of("timeZone", zone), List.of()))
                .orElseGet(() -> change(appId, Map.of(), List.of("timeZone")));
    }

    /** The app's default time zone, if one was set. */
    public CompletableFuture<Optional<String>> timeZone(String appId) {
        return redis.hget(key(appId), "timeZone").toCompletableFuture().thenApply(Optional::ofNullable);
    }
}
