package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class AuthTests extends DispatcherIntegrationTest {
    private static final String SEND = "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}";

    @Test
    void appCallsWithoutABearerTokenAre401WithAChallenge() {
        TestApp app = createApp();
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", null, SEND);
        assertProblem(response, 401);
        assertThat(response.header("WWW-Authenticate")).contains("Bearer realm=\"herald\"");

        Api.Response basic = api().call("GET", "/v1/apps/" + app.id() + "/stats", null, null, null,
                "Authorization", "Basic Zm9vOmJhcg==");
        assertProblem(basic, 401);
    }

    @Test
    void aTokenThatIsNotAnApiKeyIs401InvalidToken() {
        TestApp app = createApp();
        Api.Response response = api().get("/v1/apps/" + app.id() + "/stats", "not-a-key");
        assertProblem(response, 401);
        assertThat(response.header("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).contains("error=\"invalid_token\""));
    }

    @Test
    void aKeyOfAnotherAppIs403() {
        TestApp mine = createApp();
        TestApp theirs = createApp();
        assertProblem(api().get("/v1/apps/" + theirs.id() + "/stats", mine.key()), 403);
        assertProblem(api().json("POST", "/v1/apps/" + theirs.id() + "/messages", mine.key(), SEND), 403);
    }

    @Test
    void anUnknownAppIs404OnceAWellFormedKeyIsPresented() {
        TestApp app = createApp();
        assertProblem(api().get("/v1/apps/no-such-app/stats", app.key()), 404);
        assertProblem(api().get("/v1/apps/no-such-app/stats", null), 401);
        assertProblem(api().get("/v1/apps/no-such-app/stats", "garbage"), 401);
    }

    @Test
    void aForgedOrRevokedKeyIs401() {
        TestApp app = createApp();
        String forged = "hk_" + app.keyId() + "_" + "A".repeat(43);
        assertProblem(api().get("/v1/apps/" + app.id() + "/stats", forged), 401);

        Api.Response added = api().json("POST", "/v1/apps/" + app.id() + "/keys", ADMIN_TOKEN, null);
        assertThat(added.status()).as(added.toString()).isEqualTo(201);
        String second = added.json().get("key").asString();
        assertThat(api().get("/v1/apps/" + app.id() + "/stats", second).status()).isEqualTo(200);

        assertThat(api().call("DELETE", "/v1/apps/" + app.id() + "/keys/" + app.keyId(), ADMIN_TOKEN, null, null).status())
                .isEqualTo(204);
        assertProblem(api().get("/v1/apps/" + app.id() + "/stats", app.key()), 401);
        assertThat(api().get("/v1/apps/" + app.id() + "/stats", second).status()).isEqualTo(200);
        assertProblem(api().call("DELETE", "/v1/apps/" + app.id() + "/keys/" + app.keyId(), ADMIN_TOKEN, null, null), 404);
    }

    @Test
    void adminCallsNeedTheAdminToken() {
        TestApp app = createApp();
        Api.Response none = api().json("POST", "/v1/apps", null, Map.of("id", "x1", "name", "x"));
        assertProblem(none, 401);
        assertThat(none.header("WWW-Authenticate")).isPresent();
        assertProblem(api().get("/v1/apps/" + app.id(), "wrong-admin-token"), 401);
        assertProblem(api().get("/v1/apps/" + app.id(), app.key()), 401);
        assertProblem(api().get("/v1/apps/" + app.id(), ADMIN_TOKEN.substring(1)), 401);
        assertThat(api().get("/v1/apps/" + app.id(), ADMIN_TOKEN).status()).isEqualTo(200);
        assertThat(api().call("GET", "/v1/apps/" + app.id(), null, null, null,
                "Authorization", "bearer " + ADMIN_TOKEN).status()).isEqualTo(200);
    }

    @Test
    void theAdminTokenIsNotAnAppKey() {
        TestApp app = createApp();
        assertProblem(api().get("/v1/apps/" + app.id() + "/stats", ADMIN_TOKEN), 401);
    }

    @Test
    void creatingAnExistingAppIs409() {
        TestApp app = createApp();
        Api.Response again = api().json("POST", "/v1/apps", ADMIN_TOKEN, Map.of("id", app.id(), "name", "again"));
        assertProblem(again, 409);
        // the first key still works, no second key was issued
        assertThat(api().get("/v1/apps/" + app.id(), ADMIN_TOKEN).json().get("keys").size()).isEqualTo(1);
    }
}
