package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.webpush.P256;
import dev.herald.store.webpush.WebPushCredential;
import java.security.KeyPair;
import java.security.interfaces.ECPublicKey;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * Web Push through the API: subscriptions registered as devices with their endpoint checked, and
 * the app's VAPID key pair. Any host is allowed here (an empty allow-list), so the address checks
 * are what refuses; literal addresses keep DNS out of the test.
 */
@TestPropertySource(properties = "herald.dispatcher.webpush.allowed-hosts=")
class WebPushTests extends DispatcherIntegrationTest {
    private static final String P256DH = P256.base64url(P256.encode((ECPublicKey) P256.generate().getPublic()));
    private static final String AUTH = "BTBZMqHH6r4Tts7J_aSIgg";

    private static Map<String, Object> webpush(String endpoint, String p256dh, String auth) {
        return Map.of("channel", "webpush", "topics", List.of("news"),
                "subscription", Map.of("endpoint", endpoint, "keys", Map.of("p256dh", p256dh, "auth", auth)));
    }

    private Api.Response register(TestApp app, String device, Map<String, Object> body) {
        return api().json("PUT", "/v1/apps/" + app.id() + "/devices/" + device, app.key(), body);
    }

    private static List<String> fields(Api.Response response) {
        return response.json().get("errors").values().stream().map(e -> e.get("field").asString()).toList();
    }

    @Test
    void aBrowserSubscriptionIsRegisteredAndShownAsTheBrowserGaveIt() {
        TestApp app = createApp();
        String endpoint = "https://93.184.216.34/wpush/v2/gAAAAABk-abc";
        Map<String, Object> body = new java.util.HashMap<>(webpush(endpoint, P256DH, AUTH));
        // PushSubscription.toJSON() also has expirationTime (null in every browser today).
        body.put("subscription", Map.of("endpoint", endpoint, "expirationTime", 0, "keys", Map.of("p256dh", P256DH, "auth", AUTH)));

        Api.Response response = register(app, "browser-1", body);

        assertThat(response.status()).as(response.toString()).isEqualTo(200);
        JsonNode stored = response.json();
        assertThat(stored.get("channel").asString()).isEqualTo("webpush");
        assertThat(stored.has("token")).isFalse();
        assertThat(stored.get("subscription").get("endpoint").asString()).isEqualTo(endpoint);
        assertThat(stored.get("subscription").get("keys").get("p256dh").asString()).isEqualTo(P256DH);
        assertThat(stored.get("subscription").get("keys").get("auth").asString()).isEqualTo(AUTH);
    }

    @Test
    void aSubscriptionPointingAtAPrivateOrLoopbackAddressIsRefused() {
        TestApp app = createApp();
        for (String endpoint : List.of("https://10.0.0.7/push/x", "https://127.0.0.1:9090/webpush/x", "https://169.254.169.254/latest",
                "https://[::1]/push", "https://[fd00::1]/push", "https://100.64.1.1/push", "https://localhost/push")) {
            Api.Response response = register(app, "browser-2", webpush(endpoint, P256DH, AUTH));
            assertProblem(response, 400);
            assertThat(fields(response)).as(endpoint).containsExactly("subscription.endpoint");
        }
        assertProblem(api().get("/v1/apps/" + app.id() + "/devices/browser-2", app.key()), 404);
    }

    @Test
    void onlyHttpsEndpointsAndRealKeysAreTaken() {
        TestApp app = createApp();
        Api.Response plain = register(app, "b", webpush("http://93.184.216.34/push", P256DH, AUTH));
        assertProblem(plain, 400);
        assertThat(plain.json().get("detail").asString()).contains("https");
        assertThat(fields(register(app, "b", webpush("https://93.184.216.34/push", "AAAA", AUTH)))).containsExactly("subscription.keys.p256dh");
        assertThat(fields(register(app, "b", webpush("https://93.184.216.34/push", P256DH, "c2hvcnQ")))).containsExactly("subscription.keys.auth");
        assertThat(fields(register(app, "b", Map.of("channel", "webpush")))).containsExactly("subscription");
        assertThat(fields(register(app, "b", webpush("not a url", P256DH, AUTH)))).containsExactly("subscription.endpoint");
    }

    @Test
    void rawWebPushTokensCannotBeSentTo() {
        TestApp app = createApp();
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(),
                Map.of("title", "t", "to", Map.of("tokens", List.of(Map.of("channel", "webpush", "token", "x:y:https://10.0.0.1/")))));
        assertProblem(response, 400);
        assertThat(fields(response)).containsExactly("to.tokens");
    }

    @Test
    void everyAppHasAVapidPublicKeyForItsWebPages() {
        TestApp app = createApp();

        Api.Response key = api().get("/v1/apps/" + app.id() + "/webpush/vapid-public-key", app.key());

        assertThat(key.status()).as(key.toString()).isEqualTo(200);
        String publicKey = key.json().get("publicKey").asString();
        assertThat(P256.fromBase64url(publicKey)).hasSize(65);
        JsonNode view = api().get("/v1/apps/" + app.id(), ADMIN_TOKEN).json();
        assertThat(view.get("webpush").get("publicKey").asString()).isEqualTo(publicKey);
        assertThat(view.toString()).doesNotContain("privateKey");
    }

    @Test
    void anAppMayUploadItsOwnKeyPairOrHaveANewOneMade() {
        TestApp app = createApp();
        String path = "/v1/apps/" + app.id() + "/credentials/webpush";
        WebPushCredential own = WebPushCredential.generate(null);

        Api.Response uploaded = api().json("PUT", path, ADMIN_TOKEN,
                Map.of("privateKey", own.privateKey(), "publicKey", own.publicKey(), "subject", "mailto:ops@example.com"));
        assertThat(uploaded.status()).as(uploaded.toString()).isEqualTo(200);
        assertThat(api().get("/v1/apps/" + app.id() + "/webpush/vapid-public-key", app.key()).json().get("publicKey").asString())
                .isEqualTo(own.publicKey());

        KeyPair other = P256.generate();
        Api.Response mismatched = api().json("PUT", path, ADMIN_TOKEN, Map.of("privateKey", own.privateKey(),
                "publicKey", P256.base64url(P256.encode((ECPublicKey) other.getPublic()))));
        assertProblem(mismatched, 400);
        assertThat(fields(mismatched)).containsExactly("publicKey");
        assertThat(fields(api().json("PUT", path, ADMIN_TOKEN, Map.of("privateKey", "!!", "publicKey", own.publicKey()))))
                .containsExactly("privateKey");

        Api.Response generated = api().json("POST", path, ADMIN_TOKEN, Map.of("subject", "https://example.com/contact"));
        assertThat(generated.status()).as(generated.toString()).isEqualTo(200);
        assertThat(generated.json().get("publicKey").asString()).isNotEqualTo(own.publicKey());
        assertThat(generated.toString()).doesNotContain("privateKey");
    }
}
