package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class DeviceTests extends DispatcherIntegrationTest {

    @Test
    void aDeviceIsRegisteredReadSubscribedAndRemoved() {
        TestApp app = createApp();
        String device = "/v1/apps/" + app.id() + "/devices/phone-1";

        Api.Response put = api().json("PUT", device, app.key(), Map.of("channel", "apns", "token", "abc123", "topics", List.of("news", "sport")));
        assertThat(put.status()).as(put.toString()).isEqualTo(200);
        JsonNode stored = put.json();
        assertThat(stored.get("deviceId").asString()).isEqualTo("phone-1");
        assertThat(stored.get("channel").asString()).isEqualTo("apns");
        assertThat(stored.get("token").asString()).isEqualTo("abc123");
        assertThat(stored.get("topics").values()).extracting(JsonNode::asString).containsExactly("news", "sport");

        assertThat(api().call("PUT", device + "/topics/weather", app.key(), null, null).status()).isEqualTo(204);
        assertThat(api().call("DELETE", device + "/topics/news", app.key(), null, null).status()).isEqualTo(204);
        assertThat(api().get(device, app.key()).json().get("topics").values()).extracting(JsonNode::asString)
                .containsExactly("sport", "weather");

        Api.Response replaced = api().json("PUT", device, app.key(), Map.of("channel", "mqtt", "token", "cred-1"));
        assertThat(replaced.json().get("channel").asString()).isEqualTo("mqtt");
        assertThat(replaced.json().get("topics").size()).isZero();

        assertThat(api().call("DELETE", device, app.key(), null, null).status()).isEqualTo(204);
        assertProblem(api().get(device, app.key()), 404);
        assertProblem(api().call("DELETE", device, app.key(), null, null), 404);
        assertProblem(api().call("PUT", device + "/topics/news", app.key(), null, null), 404);
    }

    @Test
    void devicesOfAnotherAppAreInvisible() {
        TestApp one = createApp();
        TestApp two = createApp();
        api().json("PUT", "/v1/apps/" + one.id() + "/devices/shared-id", one.key(), Map.of("channel", "fcm", "token", "t"));
        assertProblem(api().get("/v1/apps/" + two.id() + "/devices/shared-id", two.key()), 404);
    }

    @Test
    void aDeviceNeedsAChannelAndAToken() {
        TestApp app = createApp();
        Api.Response response = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d", app.key(), Map.of("topics", List.of("a")));
        assertProblem(response, 400);
        assertThat(response.json().get("errors").values()).extracting(e -> e.get("field").asString())
                .containsExactly("channel", "token");
    }
}
