package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

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
    void aProblemIsStillAProblemWhateverTheClientAccepts() {
        TestApp app = createApp();
        Api.Response refused = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d-bad", app.key(),
                Map.of("topics", List.of("a")), "Accept", "text/plain");

        assertProblem(refused, 400);
    }
}
