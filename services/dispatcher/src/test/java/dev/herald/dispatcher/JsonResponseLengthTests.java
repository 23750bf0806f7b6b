package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * JSON answers carry their length and are not chunked (http.ContentLengthJsonConverter): one socket
 * write for a small answer instead of two.
 */
class JsonResponseLengthTests extends DispatcherIntegrationTest {

    private static void assertSized(Api.Response response) {
        assertThat(response.header("Transfer-Encoding")).as(response.toString()).isEmpty();
        assertThat(response.header("Content-Length")).as(response.toString())
                .contains(String.valueOf(response.body().getBytes(StandardCharsets.UTF_8).length));
    }

    @Test
    void anAcceptedSendIsAnsweredWithItsLength() {
        TestApp app = createApp();
        Api.Response accepted = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "t-1"))), "title", "Hi"));

        assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
        assertThat(accepted.contentType()).startsWith("application/json");
        assertSized(accepted);
        assertThat(accepted.json().get("state").asString()).isEqualTo("queued");
    }

    @Test
    void aProblemAndAReadAreAnsweredWithTheirLength() {
        TestApp app = createApp();
        Api.Response problem = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), "{\"title\": 1}");
        assertThat(problem.status()).as(problem.toString()).isEqualTo(400);
        assertThat(problem.contentType()).startsWith("application/problem+json");
        assertSized(problem);

        Api.Response read = api().get("/v1/apps/" + app.id() + "/stats", app.key());
        assertThat(read.status()).as(read.toString()).isEqualTo(200);
        assertSized(read);
    }
}
