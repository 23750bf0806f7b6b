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
    void aDeviceNeedsAChannel() {
        TestApp app = createApp();
        Api.Response response = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d", app.key(), Map.of("topics", List.of("a")));
        assertProblem(response, 400);
        assertThat(response.json().get("errors").values()).extracting(e -> e.get("field").asString())
                .containsExactly("channel");
    }

    @Test
    void anFcmOrApnsDeviceNeedsAToken() {
        TestApp app = createApp();
        Api.Response response = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d", app.key(), Map.of("channel", "fcm"));
        assertProblem(response, 400);
        assertThat(response.json().get("errors").values()).extracting(e -> e.get("field").asString())
                .containsExactly("token");
    }

    @Test
    void anMqttDeviceNeedsNoTokenAndGetsItsConnectParameters() {
        TestApp app = createApp();
        Api.Response response = api().json("PUT", "/v1/apps/" + app.id() + "/devices/car-7", app.key(), Map.of("channel", "mqtt"));
        assertThat(response.status()).as(response.toString()).isEqualTo(200);
        assertThat(response.json().has("token")).isFalse();
        var mqtt = response.json().get("mqtt");
        assertThat(mqtt.get("clientId").asString()).isEqualTo("car-7");
        assertThat(mqtt.get("username").asString()).isEqualTo(app.id());
        assertThat(mqtt.get("topic").asString()).isEqualTo("apps/" + app.id() + "/devices/car-7");
        assertThat(mqtt.get("password").asString()).hasSizeGreaterThanOrEqualTo(40);
        // Stable: registering again does not change the password the device holds.
        Api.Response again = api().json("PUT", "/v1/apps/" + app.id() + "/devices/car-7", app.key(), Map.of("channel", "mqtt"));
        assertThat(again.json().get("mqtt").get("password").asString()).isEqualTo(mqtt.get("password").asString());
        // Another device of the same app gets another password.
        Api.Response other = api().json("PUT", "/v1/apps/" + app.id() + "/devices/car-8", app.key(), Map.of("channel", "mqtt"));
        assertThat(other.json().get("mqtt").get("password").asString()).isNotEqualTo(mqtt.get("password").asString());
    }
}
