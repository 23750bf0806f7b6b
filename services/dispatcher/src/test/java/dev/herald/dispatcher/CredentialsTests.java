package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import tools.jackson.databind.JsonNode;

@ExtendWith(OutputCaptureExtension.class)
class CredentialsTests extends DispatcherIntegrationTest {

    private static Map<String, Object> serviceAccount(String privateKey) {
        Map<String, Object> account = new LinkedHashMap<>();
        account.put("type", "service_account");
        account.put("project_id", "demo-project");
        account.put("private_key_id", "abc123");
        account.put("private_key", privateKey);
        account.put("client_email", "push@demo-project.iam.gserviceaccount.com");
        account.put("client_id", "1234567890");
        account.put("token_uri", "https://oauth2.googleapis.com/token");
        return account;
    }

    /** The gateway would POST a signed assertion to the token_uri: a host outside herald.fcm-token-hosts is refused now. */
    @Test
    void aServiceAccountWhoseTokenUriIsOutsideTheAllowedHostsIsRefused() {
        TestApp app = createApp();
        for (String tokenUri : List.of("http://10.1.2.3/token", "http://127.0.0.1:9090/token", "https://oauth2.googleapis.com.evil/token")) {
            Map<String, Object> account = serviceAccount(TestKeys.rsaPem());
            account.put("token_uri", tokenUri);
            Api.Response response = api().json("PUT", "/v1/apps/" + app.id() + "/credentials/fcm", ADMIN_TOKEN,
                    Map.of("serviceAccount", account));
            assertProblem(response, 400);
            assertThat(response.json().at("/errors/0/field").asString()).as(tokenUri).isEqualTo("serviceAccount.token_uri");
            assertThat(response.json().at("/errors/0/message").asString()).contains("oauth2.googleapis.com");
        }
        assertThat(api().get("/v1/apps/" + app.id(), ADMIN_TOKEN).json().get("fcm").isNull()).isTrue();
    }

    private static Map<String, Object> apns(String p8) {
        return Map.of("p8", p8, "keyId", "SANDBOXKEY", "teamId", "TEAM123456", "topic", "dev.herald.demo",
                "environment", "sandbox");
    }

    @Test
    void credentialsAreStoredAndOnlyTheirPublicPartsAreShown(CapturedOutput output) {
        TestApp app = createApp();
        String rsa = TestKeys.rsaPem();
        String p8 = TestKeys.ecPem("secp256r1");
        List<Api.Response> responses = new ArrayList<>();

        Api.Response fcm = api().json("PUT", "/v1/apps/" + app.id() + "/credentials/fcm", ADMIN_TOKEN,
                Map.of("serviceAccount", serviceAccount(rsa)));
        Api.Response apnsSet = api().json("PUT", "/v1/apps/" + app.id() + "/credentials/apns", ADMIN_TOKEN, apns(p8));
        Api.Response shown = api().get("/v1/apps/" + app.id(), ADMIN_TOKEN);
        responses.addAll(List.of(fcm, apnsSet, shown));

        assertThat(fcm.status()).as(fcm.toString()).isEqualTo(204);
        assertThat(apnsSet.status()).as(apnsSet.toString()).isEqualTo(204);
        JsonNode app1 = shown.json();
        assertThat(app1.at("/fcm/projectId").asString()).isEqualTo("demo-project");
        assertThat(app1.at("/fcm/clientEmail").asString()).isEqualTo("push@demo-project.iam.gserviceaccount.com");
        assertThat(app1.at("/apns/keyId").asString()).isEqualTo("SANDBOXKEY");
        assertThat(app1.at("/apns/teamId").asString()).isEqualTo("TEAM123456");
        assertThat(app1.at("/apns/topic").asString()).isEqualTo("dev.herald.demo");
        assertThat(app1.at("/apns/environment").asString()).isEqualTo("sandbox");
        // what the console shows instead of a secret: a fingerprint and when it was set
        assertThat(app1.at("/fcm/fingerprint").asString()).matches("sha256:[0-9a-f]{32}");
        assertThat(app1.at("/apns/fingerprint").asString()).matches("sha256:[0-9a-f]{32}")
                .isNotEqualTo(app1.at("/fcm/fingerprint").asString());
        assertThat(app1.at("/apns/setAt").asString()).isNotBlank();
        assertThat(app1.get("keys").size()).isEqualTo(1);
        assertThat(app1.at("/keys/0/keyId").asString()).isEqualTo(app.keyId());
        assertThat(app1.at("/keys/0").has("sha256")).isFalse();

        // wrong kinds of keys, broken JSON around a secret: refused without quoting anything
        responses.add(api().json("PUT", "/v1/apps/" + app.id() + "/credentials/apns", ADMIN_TOKEN, apns(rsa)));
        responses.add(api().json("PUT", "/v1/apps/" + app.id() + "/credentials/apns", ADMIN_TOKEN, apns(TestKeys.ecPem("secp384r1"))));
        responses.add(api().json("PUT", "/v1/apps/" + app.id() + "/credentials/fcm", ADMIN_TOKEN,
                Map.of("serviceAccount", serviceAccount(p8))));
        responses.add(api().json("PUT", "/v1/apps/" + app.id() + "/credentials/apns", ADMIN_TOKEN,
                "{\"p8\": " + TestKeys.secretOf(p8) + ", \"keyId\": \"SANDBOXKEY\"}"));
        responses.add(api().json("PUT", "/v1/apps/" + app.id() + "/credentials/fcm", ADMIN_TOKEN,
                "{\"serviceAccount\": {\"private_key\": \"" + TestKeys.secretOf(rsa) + "\" \"type\": 1}}"));
        responses.add(api().json("PUT", "/v1/apps/" + app.id() + "/credentials/fcm", ADMIN_TOKEN,
                "{\"serviceAccount\": {\"private_key\": \"" + TestKeys.secretOf(rsa) + "\"}, \"unknown\": \"" + TestKeys.secretOf(p8) + "\"}"));
        for (Api.Response refused : responses.subList(3, responses.size())) {
            assertProblem(refused, 400);
        }
        assertThat(responses.get(3).json().at("/errors/0/field").asString()).isEqualTo("p8");
        assertThat(responses.get(5).json().at("/errors/0/field").asString()).isEqualTo("serviceAccount.private_key");

        // the stored credential is unchanged by refused updates
        assertThat(api().get("/v1/apps/" + app.id(), ADMIN_TOKEN).json().at("/apns/teamId").asString()).isEqualTo("TEAM123456");

        for (String secret : List.of(TestKeys.secretOf(rsa), TestKeys.secretOf(p8))) {
            String fragment = secret.substring(secret.length() / 2 - 20, secret.length() / 2 + 20);
            for (Api.Response response : responses) {
                assertThat(response.body()).doesNotContain(fragment);
            }
            assertThat(output.getAll()).doesNotContain(fragment);
        }
    }

    @Test
    void invalidCredentialsAreRefusedWithEveryProblemNamed() {
        TestApp app = createApp();
        Api.Response apns = api().json("PUT", "/v1/apps/" + app.id() + "/credentials/apns", ADMIN_TOKEN,
                Map.of("p8", "nope", "keyId", "short", "teamId", "TOOLONGTEAMID", "topic", "", "environment", "staging"));
        assertProblem(apns, 400);
        assertThat(apns.json().get("errors").values()).extracting(e -> e.get("field").asString())
                .containsExactlyInAnyOrder("p8", "keyId", "teamId", "topic", "environment");

        Map<String, Object> account = serviceAccount(TestKeys.rsaPem());
        account.put("type", "user");
        account.remove("token_uri");
        account.put("client_email", "nobody");
        Api.Response fcm = api().json("PUT", "/v1/apps/" + app.id() + "/credentials/fcm", ADMIN_TOKEN,
                Map.of("serviceAccount", account));
        assertProblem(fcm, 400);
        assertThat(fcm.json().get("errors").values()).extracting(e -> e.get("field").asString())
                .containsExactlyInAnyOrder("serviceAccount.type", "serviceAccount.client_email", "serviceAccount.token_uri");

        Api.Response notAnObject = api().json("PUT", "/v1/apps/" + app.id() + "/credentials/fcm", ADMIN_TOKEN,
                Map.of("serviceAccount", "{\"type\":\"service_account\"}"));
        assertProblem(notAnObject, 400);
        assertThat(notAnObject.json().at("/errors/0/field").asString()).isEqualTo("serviceAccount");
    }

    @Test
    void credentialsCanBeClearedAndUnknownAppsAre404() {
        TestApp app = createApp();
        assertThat(api().json("PUT", "/v1/apps/" + app.id() + "/credentials/apns", ADMIN_TOKEN,
                apns(TestKeys.ecPem("secp256r1"))).status()).isEqualTo(204);

        assertThat(api().call("DELETE", "/v1/apps/" + app.id() + "/credentials/apns", ADMIN_TOKEN, null, null).status())
                .isEqualTo(204);
        assertThat(api().get("/v1/apps/" + app.id(), ADMIN_TOKEN).json().get("apns").isNull()).isTrue();
        assertProblem(api().call("DELETE", "/v1/apps/" + app.id() + "/credentials/sms", ADMIN_TOKEN, null, null), 404);
        assertProblem(api().call("DELETE", "/v1/apps/missing-app/credentials/fcm", ADMIN_TOKEN, null, null), 404);
        assertProblem(api().json("PUT", "/v1/apps/missing-app/credentials/apns", ADMIN_TOKEN,
                apns(TestKeys.ecPem("secp256r1"))), 404);
        assertProblem(api().get("/v1/apps/missing-app", ADMIN_TOKEN), 404);
        assertProblem(api().json("POST", "/v1/apps/missing-app/keys", ADMIN_TOKEN, null), 404);
    }
}
