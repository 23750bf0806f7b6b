package dev.herald.store.app;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.crypto.CredentialCipher;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two "processes", each with its own Redis client: this one reads through an {@link AppCache},
 * the other changes apps through its own {@link AppStore}. The cache TTL is an hour, so only a
 * pub/sub invalidation can make a change visible within the test.
 */
class AppCacheTests {
    private static final Duration WITHIN = Duration.ofSeconds(5);

    private TestRedis local;
    private TestRedis remote;
    private AppStore localStore;
    private AppStore remoteStore;
    private AppCache cache;

    @BeforeEach
    void start() {
        local = new TestRedis();
        remote = new TestRedis();
        local.flush();
        CredentialCipher cipher = new CredentialCipher(TestRedis.CRYPTO_KEY);
        localStore = new AppStore(local.async(), local.functions(), cipher, TestRedis.CLOCK);
        remoteStore = new AppStore(remote.async(), remote.functions(), cipher, TestRedis.CLOCK);
        cache = new AppCache(localStore, local.pubSub(), Duration.ofHours(1));
    }

    @AfterEach
    void stop() {
        local.close();
        remote.close();
    }

    @Test
    void servesTheLoadedApp() {
        ApiKeys.Issued issued = join(remoteStore.create("shop", "Shop")).orElseThrow();

        App app = join(cache.get("shop")).orElseThrow();

        assertThat(app.name()).isEqualTo("Shop");
        assertThat(ApiKeys.matches(app, issued.key())).isTrue();
    }

    @Test
    void seesAChangeMadeThroughAnotherStore() {
        join(remoteStore.create("shop", "Shop"));
        App before = join(cache.get("shop")).orElseThrow();
        assertThat(before.fcm()).isEmpty();

        assertThat(join(remoteStore.setFcm("shop", AppStoreTests.FCM))).isTrue();

        await().atMost(WITHIN).untilAsserted(() -> {
            App after = join(cache.get("shop")).orElseThrow();
            assertThat(after.fcm()).contains(AppStoreTests.FCM);
            assertThat(after.version()).isGreaterThan(before.version());
        });
    }

    @Test
    void seesARevokedKeyDisappear() {
        ApiKeys.Issued issued = join(remoteStore.create("shop", "Shop")).orElseThrow();
        assertThat(ApiKeys.matches(join(cache.get("shop")).orElseThrow(), issued.key())).isTrue();

        join(remoteStore.revokeKey("shop", issued.keyId()));

        await().atMost(WITHIN).until(() -> !ApiKeys.matches(join(cache.get("shop")).orElseThrow(), issued.key()));
    }

    @Test
    void cachesAnUnknownAppAsEmpty() {
        assertThat(join(cache.get("shop"))).isEmpty();

        // Written behind the store's back: no change is published, so the cached answer stands.
        remote.sync().hset(RedisKeys.app("shop"), "name", "Shop");
        assertThat(join(localStore.load("shop"))).isPresent();

        assertThat(join(cache.get("shop"))).isEmpty();
    }

    @Test
    void unknownAppBecomesVisibleOnceCreatedElsewhere() {
        assertThat(join(cache.get("shop"))).isEmpty();

        ApiKeys.Issued issued = join(remoteStore.create("shop", "Shop")).orElseThrow();

        await().atMost(WITHIN).untilAsserted(() -> {
            Optional<App> app = join(cache.get("shop"));
            assertThat(app).isPresent();
            assertThat(ApiKeys.matches(app.orElseThrow(), issued.key())).isTrue();
        });
    }

    @Test
    void invalidateDropsTheEntryAtOnce() {
        assertThat(join(cache.get("shop"))).isEmpty();
        remote.sync().hset(RedisKeys.app("shop"), "name", "Shop");

        cache.invalidate("shop");

        assertThat(join(cache.get("shop"))).map(App::name).contains("Shop");
    }
}
