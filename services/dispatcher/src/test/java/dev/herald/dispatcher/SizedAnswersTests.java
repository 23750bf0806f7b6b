package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every JSON answer, problems included, carries its length, so it leaves in one write rather than
 * a chunk and a closing chunk (SizedJsonAnswers says why).
 */
class SizedAnswersTests extends DispatcherIntegrationTest {

    private static void assertSized(Api.Response response) {
        assertThat(response.body()).as(response.toString()).isNotEmpty();
        assertThat(response.header("Content-Length")).as(response.toString())
                .contains(String.valueOf(response.body().getBytes(StandardCharsets.UTF_8).length));
        assertThat(response.header("Transfer-Encoding")).as(response.toString()).isEmpty();
    }

    @Test
    void aSendItsStatusAndARegistrationAreAnsweredWithTheirLength() {
        TestApp app = createApp();
        Api.Response registered = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d-sized", app.key(),
                Map.of("channel", "fcm", "token", "t-sized", "topics", List.of("news")));
        assertThat(registered.status()).as(registered.toString()).isEqualTo(200);
        assertSized(registered);

        Api.Response sent = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "t-sized"))), "title", "Hi"));
        assertThat(sent.status()).as(sent.toString()).isEqualTo(202);
        assertThat(sent.contentType()).startsWith("application/json");
        assertSized(sent);

        Api.Response status = api().get("/v1/apps/" + app.id() + "/messages/" + sent.json().get("id").asString(), app.key());
        assertThat(status.status()).as(status.toString()).isEqualTo(200);
        assertSized(status);
    }

    @Test
    void problemsAreAnsweredWithTheirLength() {
        TestApp app = createApp();
        Api.Response invalid = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d-bad", app.key(),
                Map.of("topics", List.of("a")));
        assertProblem(invalid, 400);
        assertSized(invalid);

        Api.Response unknown = api().get("/v1/nothing-here", ADMIN_TOKEN);
        assertProblem(unknown, 404);
        assertSized(unknown);
    }
}
