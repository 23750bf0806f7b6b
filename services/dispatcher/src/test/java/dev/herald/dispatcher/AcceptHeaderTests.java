package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The API has one representation, JSON, so it disregards Accept: a call that changes state is never
 * refused (406) after it changed it, which would make the client repeat it.
 */
class AcceptHeaderTests extends DispatcherIntegrationTest {

    @Test
    void aRegistrationIsAnsweredInJsonAndDoneWhateverTheClientAccepts() {
        TestApp app = createApp();
        Api.Response registered = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d-accept", app.key(),
                Map.of("channel", "fcm", "token", "t-accept", "topics", List.of("news")), "Accept", "text/html");

        assertThat(registered.status()).as(registered.toString()).isEqualTo(200);
        assertThat(registered.contentType()).startsWith("application/json");
        Api.Response read = api().call("GET", "/v1/apps/" + app.id() + "/devices/d-accept", app.key(), null, null,
                "Accept", "image/png");
        assertThat(read.status()).as(read.toString()).isEqualTo(200);
        assertThat(read.json().get("token").asString()).isEqualTo("t-accept");
    }

    @Test
    void aSendIsAnsweredInJsonWhateverTheClientAccepts() {
        // The message is queued before the answer is written: refusing the answer then (406) would
        // only make the client send it again.
        TestApp app = createApp();
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "t-accept"))), "title", "Hi"),
                "Accept", "text/plain");

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        assertThat(response.contentType()).startsWith("application/json");
        assertThat(messagesOf(Queues.SEND_NORMAL, response.json().get("id").asString())).hasSize(1);
    }

    @Test
    void aProblemIsStillAProblemWhateverTheClientAccepts() {
        TestApp app = createApp();
        Api.Response refused = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d-bad", app.key(),
                Map.of("topics", List.of("a")), "Accept", "text/plain");

        assertProblem(refused, 400);
    }
}
