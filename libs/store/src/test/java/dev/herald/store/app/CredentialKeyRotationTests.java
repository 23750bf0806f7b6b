package dev.herald.store.app;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.herald.store.TestRedis;
import dev.herald.store.crypto.CredentialCipher;
import dev.herald.store.crypto.CredentialKeyException;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import io.lettuce.core.ScriptOutputType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Rotating the credential key against real Redis: old key, rotation, re-encryption, old key removed. */
class CredentialKeyRotationTests {
    static final String OLD_KEY = TestRedis.CRYPTO_KEY;
    static final String NEW_KEY = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=";

    @RegisterExtension
    static final TestRedis redis = new TestRedis();

    private static AppStore store(String key, List<String> previous) {
        return new AppStore(redis.async(), redis.functions(), new CredentialCipher(key, previous), TestRedis.CLOCK);
    }

    @Test
    void afterRotationAndReencryptionTheOldKeyCanBeRemoved() {
        AppStore old = store(OLD_KEY, List.of());
        join(old.create("shop", "Shop"));
        join(old.setFcm("shop", AppStoreTests.FCM));
        join(old.setApns("shop", AppStoreTests.APNS));
        // One credential as stored before key ids: the same ciphertext without its prefix.
        String apns = redis.sync().hget(RedisKeys.app("shop"), "cred:apns");
        redis.sync().hset(RedisKeys.app("shop"), "cred:apns", apns.substring(apns.indexOf(':') + 1));

        AppStore rotated = store(NEW_KEY, List.of(OLD_KEY));
        App before = join(rotated.load("shop")).orElseThrow();
        assertThat(before.fcm()).contains(AppStoreTests.FCM);
        assertThat(before.apns()).contains(AppStoreTests.APNS);

        AppStore.Reencryption done = join(rotated.reencryptAll());
        assertThat(done).isEqualTo(new AppStore.Reencryption(1, 3, 0, List.of()));
        String newId = new CredentialCipher(NEW_KEY).currentKeyId();
        assertThat(redis.sync().hgetall(RedisKeys.app("shop"))).allSatisfy((field, value) -> {
            if (field.startsWith("cred:")) {
                assertThat(value).as(field).startsWith(newId + ":");
            }
        });
        assertThat(join(rotated.reencryptAll())).as("a second run has nothing left to do")
                .isEqualTo(new AppStore.Reencryption(1, 0, 3, List.of()));

        App after = join(store(NEW_KEY, List.of()).load("shop")).orElseThrow();
        assertThat(after.fcm()).contains(AppStoreTests.FCM);
        assertThat(after.apns()).contains(AppStoreTests.APNS);
        assertThat(after.webpush()).isEqualTo(before.webpush());
    }

    @Test
    void withoutTheKeyACredentialWasStoredWithTheErrorNamesTheKeyAndReencryptionListsIt() {
        AppStore old = store(OLD_KEY, List.of());
        join(old.create("shop", "Shop"));
        join(old.setFcm("shop", AppStoreTests.FCM));

        AppStore newOnly = store(NEW_KEY, List.of());
        Throwable failure = catchThrowable(() -> join(newOnly.load("shop")));
        assertThat(failure).isInstanceOf(CredentialKeyException.class)
                .hasMessageContaining(new CredentialCipher(OLD_KEY).currentKeyId())
                .hasMessageNotContaining(OLD_KEY).hasMessageNotContaining(NEW_KEY);

        AppStore.Reencryption done = join(newOnly.reencryptAll());
        assertThat(done.reencrypted()).isZero();
        assertThat(done.undecryptable()).containsExactlyInAnyOrder("shop/cred:fcm", "shop/cred:webpush");
    }

    @Test
    void aCredentialSetWhileReencryptingIsNotOverwritten() {
        AppStore rotated = store(NEW_KEY, List.of(OLD_KEY));
        join(store(OLD_KEY, List.of()).create("shop", "Shop"));
        join(store(OLD_KEY, List.of()).setFcm("shop", AppStoreTests.FCM));
        String read = redis.sync().hget(RedisKeys.app("shop"), "cred:fcm");
        String resealed = new CredentialCipher(NEW_KEY, List.of(OLD_KEY)).reencrypt(read, "shop");
        FcmCredential replacement = new FcmCredential("{\"type\":\"service_account\"}", "other", "x@other.iam.gserviceaccount.com");
        join(rotated.setFcm("shop", replacement));

        Long replaced = join(redis.functions().<Long>call(HeraldFunctions.Function.APP_RESEAL, ScriptOutputType.INTEGER,
                new String[] {RedisKeys.app("shop")}, "cred:fcm", read, resealed));

        assertThat(replaced).isZero();
        assertThat(join(rotated.load("shop")).orElseThrow().fcm()).contains(replacement);
        assertThat(Map.of("cred:fcm", redis.sync().hget(RedisKeys.app("shop"), "cred:fcm"))).doesNotContainValue(resealed);
    }
}
