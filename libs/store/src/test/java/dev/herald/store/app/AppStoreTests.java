package dev.herald.store.app;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.crypto.CredentialCipher;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class AppStoreTests {
    static final String PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-herald-test-secret\n-----END PRIVATE KEY-----\n";
    static final FcmCredential FCM = new FcmCredential(
            "{\"type\":\"service_account\",\"private_key\":\"" + PRIVATE_KEY.replace("\n", "\\n") + "\"}",
            "herald-test", "push@herald-test.iam.gserviceaccount.com");
    static final ApnsCredential APNS = new ApnsCredential(PRIVATE_KEY, "ABC123DEFG", "TEAM123456", "dev.herald.demo", "sandbox");

    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    private static AppStore store;

    @BeforeAll
    static void connect() {
        store = new AppStore(redis.async(), redis.functions(), new CredentialCipher(TestRedis.CRYPTO_KEY), TestRedis.CLOCK);
    }

    @Test
    void createReturnsAKeyThatMatchesTheStoredApp() {
        ApiKeys.Issued issued = join(store.create("shop", "Shop")).orElseThrow();

        App app = join(store.load("shop")).orElseThrow();
        assertThat(app.id()).isEqualTo("shop");
        assertThat(app.name()).isEqualTo("Shop");
        assertThat(app.keys()).extracting(ApiKey::keyId).containsExactly(issued.keyId());
        assertThat(ApiKeys.matches(app, issued.key())).isTrue();
        assertThat(app.fcm()).isEmpty();
        assertThat(app.apns()).isEmpty();
    }

    @Test
    void secondCreateOfTheSameIdIsEmptyAndChangesNothing() {
        ApiKeys.Issued first = join(store.create("shop", "Shop")).orElseThrow();
        long version = join(store.load("shop")).orElseThrow().version();

        assertThat(join(store.create("shop", "Impostor"))).isEmpty();

        App app = join(store.load("shop")).orElseThrow();
        assertThat(app.name()).isEqualTo("Shop");
        assertThat(app.version()).isEqualTo(version);
        assertThat(app.keys()).extracting(ApiKey::keyId).containsExactly(first.keyId());
    }

    @Test
    void limitsAreStoredAndEmptyFieldsKeepTheDefaults() {
        join(store.create("shop", "Shop"));
        assertThat(join(store.load("shop")).orElseThrow().limits()).isEqualTo(AppLimits.DEFAULTS);

        assertThat(join(store.setLimits("shop", new AppLimits(1200L, null, 50L)))).isTrue();
        assertThat(join(store.load("shop")).orElseThrow().limits()).isEqualTo(new AppLimits(1200L, null, 50L));
        assertThat(join(store.setLimits("nobody", AppLimits.DEFAULTS))).isFalse();
    }

    @Test
    void loadOfAnUnknownAppIsEmpty() {
        assertThat(join(store.load("nobody"))).isEmpty();
    }

    @Test
    void loadDecryptsStoredCredentials() {
        join(store.create("shop", "Shop"));
        assertThat(join(store.setFcm("shop", FCM))).isTrue();
        assertThat(join(store.setApns("shop", APNS))).isTrue();

        App app = join(store.load("shop")).orElseThrow();
        assertThat(app.fcm()).contains(FCM);
        assertThat(app.apns()).contains(APNS);
    }

    @Test
    void redisHoldsNoPlaintextSecret() {
        ApiKeys.Issued issued = join(store.create("shop", "Shop")).orElseThrow();
        join(store.setFcm("shop", FCM));
        join(store.setApns("shop", APNS));
        String keySecret = issued.key().substring(12);

        List<String> stored = everythingStored(redis.sync());

        assertThat(stored).isNotEmpty();
        assertThat(stored).noneMatch(s -> s.contains("herald-test-secret"))
                .noneMatch(s -> s.contains("PRIVATE KEY"))
                .noneMatch(s -> s.contains(keySecret));
    }

    @Test
    void credentialCopiedToAnotherAppDoesNotDecrypt() {
        join(store.create("shop", "Shop"));
        join(store.create("thief", "Thief"));
        join(store.setFcm("shop", FCM));

        redis.sync().hset(RedisKeys.app("thief"), "cred:fcm", redis.sync().hget(RedisKeys.app("shop"), "cred:fcm"));

        assertThatThrownBy(() -> join(store.load("thief")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be decrypted");
    }

    @Test
    void versionIncreasesOnEveryChange() {
        ApiKeys.Issued first = join(store.create("shop", "Shop")).orElseThrow();
        List<Long> versions = new ArrayList<>();
        versions.add(version("shop"));

        join(store.setFcm("shop", FCM));
        versions.add(version("shop"));
        join(store.setApns("shop", APNS));
        versions.add(version("shop"));
        join(store.addKey("shop"));
        versions.add(version("shop"));
        join(store.revokeKey("shop", first.keyId()));
        versions.add(version("shop"));
        join(store.clearCredential("shop", "fcm"));
        versions.add(version("shop"));

        assertThat(versions).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void clearCredentialRemovesOnlyThatProvider() {
        join(store.create("shop", "Shop"));
        join(store.setFcm("shop", FCM));
        join(store.setApns("shop", APNS));

        assertThat(join(store.clearCredential("shop", "fcm"))).isTrue();

        App app = join(store.load("shop")).orElseThrow();
        assertThat(app.fcm()).isEmpty();
        assertThat(app.apns()).contains(APNS);
    }

    @Test
    void revokedKeyNoLongerMatchesWhileTheOtherStillDoes() {
        ApiKeys.Issued first = join(store.create("shop", "Shop")).orElseThrow();
        ApiKeys.Issued second = join(store.addKey("shop")).orElseThrow();
        assertThat(ApiKeys.matches(join(store.load("shop")).orElseThrow(), first.key())).isTrue();

        assertThat(join(store.revokeKey("shop", first.keyId()))).isTrue();

        App app = join(store.load("shop")).orElseThrow();
        assertThat(app.keys()).extracting(ApiKey::keyId).containsExactly(second.keyId());
        assertThat(ApiKeys.matches(app, first.key())).isFalse();
        assertThat(ApiKeys.matches(app, second.key())).isTrue();
    }

    @Test
    void revokingAnUnknownKeyIsFalseAndKeepsTheVersion() {
        join(store.create("shop", "Shop"));
        long version = version("shop");

        assertThat(join(store.revokeKey("shop", "00000000"))).isFalse();
        assertThat(join(store.revokeKey("nobody", "00000000"))).isFalse();
        assertThat(version("shop")).isEqualTo(version);
    }

    @Test
    void changesToAnUnknownAppReturnFalseAndCreateNothing() {
        assertThat(join(store.setFcm("ghost", FCM))).isFalse();
        assertThat(join(store.setApns("ghost", APNS))).isFalse();
        assertThat(join(store.clearCredential("ghost", "fcm"))).isFalse();
        assertThat(join(store.addKey("ghost"))).isEmpty();

        assertThat(redis.sync().exists(RedisKeys.app("ghost"))).isZero();
        assertThat(redis.sync().dbsize()).isZero();
        assertThat(join(store.load("ghost"))).isEmpty();
    }

    private static long version(String appId) {
        return join(store.load(appId)).orElseThrow().version();
    }

    /** Every key name, hash field, and value in the database, as text. */
    static List<String> everythingStored(RedisClusterCommands<String, String> redis) {
        List<String> out = new ArrayList<>();
        KeyScanCursor<String> cursor = redis.scan(ScanCursor.INITIAL);
        while (true) {
            for (String key : cursor.getKeys()) {
                out.add(key);
                switch (redis.type(key)) {
                    case "string" -> out.add(redis.get(key));
                    case "hash" -> redis.hgetall(key).forEach((field, value) -> {
                        out.add(field);
                        out.add(value);
                    });
                    case "set" -> out.addAll(redis.smembers(key));
                    case "list" -> out.addAll(redis.lrange(key, 0, -1));
                    case "zset" -> out.addAll(redis.zrange(key, 0, -1));
                    default -> throw new AssertionError("unexpected type of " + key + ": " + redis.type(key));
                }
            }
            if (cursor.isFinished()) {
                return out;
            }
            cursor = redis.scan(cursor);
        }
    }
}
