package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.crypto.CredentialCipher;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.webpush.WebPushCredential;
import io.lettuce.core.Range;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

/** The admin audit log: each admin action leaves exactly its entry, and no entry holds a secret. */
class AuditTests extends DispatcherIntegrationTest {
    private static final String FORWARDED = "203.0.113.7, 10.0.0.2";

    @Autowired
    RedisClusterAsyncCommands<String, String> redis;

    private Api.Response admin(String method, String path, Object body) {
        return api().json(method, path, ADMIN_TOKEN, body, "X-Forwarded-For", FORWARDED);
    }

    private List<JsonNode> entriesOf(String appId) {
        Api.Response response = api().get("/v1/audit?limit=100&app=" + appId, ADMIN_TOKEN);
        assertThat(response.status()).as(response.toString()).isEqualTo(200);
        List<JsonNode> entries = new ArrayList<>();
        response.json().get("entries").forEach(entries::add);
        return entries.reversed();
    }

    private static Map<String, Object> serviceAccount(String privateKey) {
        Map<String, Object> account = new LinkedHashMap<>();
        account.put("type", "service_account");
        account.put("project_id", "demo-project");
        account.put("private_key", privateKey);
        account.put("client_email", "push@demo-project.iam.gserviceaccount.com");
        account.put("token_uri", "https://oauth2.googleapis.com/token");
        return account;
    }

    @Test
    void everyAdminActionLeavesExactlyItsEntryAndNoSecret() throws Exception {
        String id = "audit-" + java.util.UUID.randomUUID().toString().substring(0, 8);
        String path = "/v1/apps/" + id;
        String rsa = TestKeys.rsaPem();
        String p8 = TestKeys.ecPem("secp256r1");
        WebPushCredential vapid = WebPushCredential.generate(null);

        Api.Response created = admin("POST", "/v1/apps", Map.of("id", id, "name", "Audited"));
        String firstKeyId = created.json().at("/apiKey/keyId").asString();
        String firstKey = created.json().at("/apiKey/key").asString();
        Api.Response added = admin("POST", path + "/keys", null);
        String secondKeyId = added.json().get("keyId").asString();
        String secondKey = added.json().get("key").asString();
        List<Api.Response> responses = List.of(created, added,
                admin("DELETE", path + "/keys/" + firstKeyId, null),
                admin("DELETE", path + "/keys/ffffffff", null), // 404: no entry
                admin("PUT", path + "/credentials/fcm", Map.of("serviceAccount", serviceAccount(rsa))),
                admin("PUT", path + "/credentials/apns", Map.of("p8", p8, "keyId", "SANDBOXKEY", "teamId", "TEAM123456",
                        "topic", "dev.herald.demo", "environment", "sandbox")),
                admin("PUT", path + "/credentials/webpush", Map.of("privateKey", vapid.privateKey(), "publicKey", vapid.publicKey())),
                admin("POST", path + "/credentials/webpush", null),
                admin("PUT", path + "/limits", Map.of("fcmPerMinute", 600)),
                admin("PUT", path + "/time-zone", Map.of("timeZone", "Europe/Paris")),
                admin("DELETE", path + "/time-zone", null),
                admin("DELETE", path + "/credentials/fcm", null),
                admin("DELETE", path + "/credentials/apns", null),
                admin("DELETE", path + "/credentials/webpush", null),
                admin("DELETE", path + "/devices/car-7/mqtt-credentials", null));
        assertThat(responses).extracting(Api.Response::status)
                .containsExactly(201, 201, 204, 404, 204, 204, 200, 200, 200, 200, 204, 204, 204, 204, 204);
        String mqttPassword = api().json("PUT", path + "/devices/car-7", secondKey, Map.of("channel", "mqtt"))
                .json().at("/mqtt/password").asString();
        assertThat(mqttPassword).isNotBlank();

        List<JsonNode> entries = entriesOf(id);
        assertThat(entries).extracting(e -> e.get("action").asString() + " " + e.path("target").asString(""))
                .containsExactly("app.created " + firstKeyId, "key.created " + secondKeyId, "key.revoked " + firstKeyId,
                        "credential.set fcm", "credential.set apns", "credential.set webpush", "credential.generated webpush",
                        "limits.set ", "time-zone.set ", "time-zone.deleted ", "credential.deleted fcm",
                        "credential.deleted apns", "credential.deleted webpush", "device.mqtt-credentials.revoked car-7");
        assertThat(entries).allSatisfy(entry -> {
            assertThat(entry.get("app").asString()).isEqualTo(id);
            assertThat(entry.get("actor").asString()).matches("admin:[0-9a-f]{8}");
            assertThat(entry.get("address").asString()).isEqualTo("127.0.0.1");
            assertThat(entry.get("forwardedFor").asString()).isEqualTo(FORWARDED);
            assertThat(entry.get("at").asString()).isNotBlank();
        });
        assertThat(entries.get(3).get("detail").asString()).startsWith("sha256:");
        assertThat(entries.get(7).get("detail").asString()).isEqualTo("fcmPerMinute=600, apnsPerMinute=null, apiPerSecond=null");
        assertThat(entries.get(8).get("detail").asString()).isEqualTo("Europe/Paris");
        assertThat(entries.get(13).get("detail").asString()).isEqualTo("generation 1");

        // Neither the API's answer nor what Redis holds quotes a secret.
        String served = api().get("/v1/audit?limit=100&app=" + id, ADMIN_TOKEN).body();
        StringBuilder stored = new StringBuilder();
        for (StreamMessage<String, String> message : redis.xrange(RedisKeys.audit(), Range.create("-", "+")).get()) {
            stored.append(message.getBody()).append('\n');
        }
        for (String secret : List.of(firstKey, secondKey, ADMIN_TOKEN, vapid.privateKey(), mqttPassword,
                pemBody(rsa), pemBody(p8), "PRIVATE KEY")) {
            assertThat(served).as("the audit API").doesNotContain(secret);
            assertThat(stored.toString()).as("the audit stream").doesNotContain(secret);
        }
    }

    /** The base64 lines of a PEM (a JSON body escapes its newlines, so each line is checked). */
    private static String pemBody(String pem) {
        return pem.lines().filter(line -> !line.startsWith("-----")).findFirst().orElseThrow();
    }

    @Test
    void pagesFollowNextAndFiltersNarrowByAction() {
        TestApp app = createApp();
        for (int i = 0; i < 3; i++) {
            assertThat(api().json("POST", "/v1/apps/" + app.id() + "/keys", ADMIN_TOKEN, null).status()).isEqualTo(201);
        }
        Api.Response first = api().get("/v1/audit?limit=2&app=" + app.id(), ADMIN_TOKEN);
        assertThat(first.json().get("entries")).hasSize(2);
        Api.Response second = api().get("/v1/audit?limit=2&app=" + app.id() + "&before=" + first.json().get("next").asString(),
                ADMIN_TOKEN);
        List<String> actions = new ArrayList<>();
        first.json().get("entries").forEach(e -> actions.add(e.get("action").asString()));
        second.json().get("entries").forEach(e -> actions.add(e.get("action").asString()));
        assertThat(actions).containsExactly("key.created", "key.created", "key.created", "app.created");

        Api.Response filtered = api().get("/v1/audit?action=app.created&app=" + app.id(), ADMIN_TOKEN);
        assertThat(filtered.json().get("entries")).hasSize(1);
        assertThat(filtered.json().has("next")).isFalse();
    }

    @Test
    void badParametersAreProblemsAndTheLogNeedsTheAdminToken() {
        for (String query : List.of("limit=0", "limit=201", "limit=x", "limit=", "before=abc", "before=", "action=Key%20Revoked",
                "app=a%2Fb")) {
            Api.Response response = api().get("/v1/audit?" + query, ADMIN_TOKEN);
            assertProblem(response, 400);
            assertThat(response.json().get("type").asString()).as(query).isNotBlank();
        }
        assertProblem(api().get("/v1/audit", null), 401);
        assertProblem(api().get("/v1/audit", createApp().key()), 401);
    }

    /** The change is made, but an unrecorded change must not pass silently: 503, and the entry in the log. */
    @Test
    void anAuditWriteThatFailsAnswers503AndSaysTheChangeWasMade() throws Exception {
        TestApp app = createApp();
        redis.rename(RedisKeys.audit(), "audit-kept-aside").get();
        redis.set(RedisKeys.audit(), "not a stream").get();
        try {
            Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/keys", ADMIN_TOKEN, null);
            assertProblem(response, 503);
            assertThat(response.json().get("detail").asString()).contains("the change was made");
            assertThat(api().get("/v1/apps/" + app.id(), ADMIN_TOKEN).json().get("keys")).hasSize(2);
        } finally {
            redis.del(RedisKeys.audit()).get();
            redis.rename("audit-kept-aside", RedisKeys.audit()).get();
        }
    }

    @Test
    void reencryptionIsAnAuditedAdminAction() {
        Api.Response response = api().json("POST", "/v1/admin/credentials/re-encrypt", ADMIN_TOKEN, null);

        assertThat(response.status()).as(response.toString()).isEqualTo(200);
        String keyId = new CredentialCipher(CRYPTO_KEY).currentKeyId();
        assertThat(response.json().get("keyId").asString()).isEqualTo(keyId);
        assertThat(response.json().get("apps").asInt()).isPositive();
        JsonNode latest = api().get("/v1/audit?limit=1&action=credentials.re-encrypted", ADMIN_TOKEN).json().at("/entries/0");
        assertThat(latest.get("target").asString()).isEqualTo("key " + keyId);
        assertThat(latest.has("app")).isFalse();
        assertProblem(api().json("POST", "/v1/admin/credentials/re-encrypt", null, null), 401);
    }

    /** A credential stored with a key this dispatcher does not have: a clear 503 naming the key, no stack trace. */
    @Test
    void aCredentialUnderAnUnknownKeyIsAClearProblem() throws Exception {
        TestApp app = createApp();
        CredentialCipher other = new CredentialCipher("ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=");
        redis.hset(RedisKeys.app(app.id()), "cred:apns", other.encrypt("{}", app.id())).get();
        redis.publish(RedisKeys.APP_CHANGES_CHANNEL, app.id()).get();
        try {
            Api.Response response = api().get("/v1/apps/" + app.id(), ADMIN_TOKEN);
            assertProblem(response, 503);
            assertThat(response.json().get("type").asString()).endsWith("credential-key-missing");
            assertThat(response.json().get("detail").asString()).contains(other.currentKeyId(), "herald.crypto-previous-keys")
                    .doesNotContain("Exception", "\tat ");
        } finally {
            assertThat(api().json("DELETE", "/v1/apps/" + app.id() + "/credentials/apns", ADMIN_TOKEN, null).status()).isEqualTo(204);
        }
    }
}
