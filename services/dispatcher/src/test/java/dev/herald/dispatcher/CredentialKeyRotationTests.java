package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.app.App;
import dev.herald.store.app.AppStore;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.crypto.CredentialCipher;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * A dispatcher in the middle of a key rotation: {@code herald.crypto-key} is the new key (the
 * tests' usual one, so the other tests' apps are already under it), the old one in
 * {@code herald.crypto-previous-keys}.
 */
@TestPropertySource(properties = "herald.crypto-previous-keys=" + CredentialKeyRotationTests.OLD_KEY)
class CredentialKeyRotationTests extends DispatcherIntegrationTest {
    static final String OLD_KEY = "QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl8=";
    static final String NEW_KEY = CRYPTO_KEY;

    @Autowired
    RedisClusterAsyncCommands<String, String> redis;
    @Autowired
    HeraldFunctions functions;

    private AppStore storeWith(String key) {
        return new AppStore(redis, functions, new CredentialCipher(key), Clock.systemUTC());
    }

    @Test
    void credentialsOfTheOldKeyStayReadableAndAfterReencryptionNeedOnlyTheNewOne() throws Exception {
        String appId = "rotate-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        AppStore old = storeWith(OLD_KEY);
        old.create(appId, "Rotated").get();
        FcmCredential fcm = new FcmCredential("{\"type\":\"service_account\",\"private_key\":\"secret\"}", "demo",
                "push@demo.iam.gserviceaccount.com");
        old.setFcm(appId, fcm).get();

        Api.Response before = api().get("/v1/apps/" + appId, ADMIN_TOKEN);
        assertThat(before.status()).as(before.toString()).isEqualTo(200);
        assertThat(before.json().at("/fcm/projectId").asString()).isEqualTo("demo");

        Api.Response done = api().json("POST", "/v1/admin/credentials/re-encrypt", ADMIN_TOKEN, null);
        assertThat(done.status()).as(done.toString()).isEqualTo(200);
        JsonNode result = done.json();
        String newId = new CredentialCipher(NEW_KEY).currentKeyId();
        assertThat(result.get("keyId").asString()).isEqualTo(newId);
        assertThat(result.get("reencrypted").asInt()).isGreaterThanOrEqualTo(2); // this app's FCM and VAPID pair
        List<String> undecryptable = result.get("undecryptable").valueStream().map(JsonNode::asString).toList();
        assertThat(undecryptable).noneMatch(entry -> entry.startsWith(appId + "/"));
        assertThat(redis.hget(RedisKeys.app(appId), "cred:fcm").get()).startsWith(newId + ":");

        App withNewKeyOnly = storeWith(NEW_KEY).load(appId).get().orElseThrow();
        assertThat(withNewKeyOnly.fcm()).contains(fcm);
        assertThat(withNewKeyOnly.webpush()).isPresent();
        JsonNode audited = api().get("/v1/audit?limit=1&action=credentials.re-encrypted", ADMIN_TOKEN).json().at("/entries/0");
        assertThat(audited.get("target").asString()).isEqualTo("key " + newId);
    }
}
