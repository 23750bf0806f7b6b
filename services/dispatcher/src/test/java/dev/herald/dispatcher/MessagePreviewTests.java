package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Notification;
import dev.herald.contract.Queues;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** {@code POST .../previews}: the providers' exact payloads, built by the gateway's code, and nothing sent. */
class MessagePreviewTests extends DispatcherIntegrationTest {
    private static final String HOSTILE = "<img src=x onerror=alert(1)>";

    @Test
    void tokensArePreviewedPerChannelWithThePayloadsTheGatewaySendsAndNothingIsQueued() {
        TestApp app = createApp();
        Api.Response preview = api().json("POST", "/v1/apps/" + app.id() + "/previews", app.key(), Map.of(
                "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "fcm-1"),
                        Map.of("channel", "apns", "token", "apns-1"), Map.of("channel", "fcm", "token", "fcm-2"),
                        Map.of("channel", "mqtt", "token", "box-1"))),
                "title", HOSTILE, "body", "There", "data", Map.of("k", "v"), "ttl", 60, "priority", "high",
                "collapseKey", "c1"));
        assertThat(preview.status()).as(preview.toString()).isEqualTo(200);
        JsonNode answer = preview.json();
        String id = answer.get("messageId").asString();
        JsonNode channels = answer.get("channels");
        assertThat(channels.propertyNames()).containsExactly("fcm", "apns", "mqtt");

        JsonNode fcm = channels.get("fcm");
        assertThat(fcm.get("target").asString()).isEqualTo("fcm-1");
        JsonNode message = fcm.get("body").get("message");
        assertThat(message.get("token").asString()).isEqualTo("fcm-1");
        assertThat(message.get("notification").get("title").asString()).isEqualTo(HOSTILE);
        assertThat(message.get("data").get(Notification.MESSAGE_ID_KEY).asString()).isEqualTo(id);
        assertThat(message.get("android").get("ttl").asString()).isEqualTo("60s");
        assertThat(message.get("android").get("priority").asString()).isEqualTo("high");

        JsonNode apns = channels.get("apns");
        assertThat(apns.get("body").get("aps").get("alert").get("title").asString()).isEqualTo(HOSTILE);
        assertThat(apns.get("body").get("k").asString()).isEqualTo("v");
        assertThat(apns.get("headers").get("apns-push-type").asString()).isEqualTo("alert");
        assertThat(apns.get("headers").get("apns-priority").asString()).isEqualTo("10");
        assertThat(apns.get("headers").get("apns-collapse-id").asString()).isEqualTo("c1");
        assertThat(apns.get("headers").has("apns-topic")).as("no APNs credentials, no topic").isFalse();

        JsonNode mqtt = channels.get("mqtt").get("body");
        assertThat(mqtt.get("id").asString()).isEqualTo(id);
        assertThat(mqtt.get("title").asString()).isEqualTo(HOSTILE);
        assertThat(mqtt.get("data").get("k").asString()).isEqualTo("v");

        assertThat(messagesOf(Queues.SEND_HIGH, id)).as("a preview queues nothing").isEmpty();
        assertThat(api().get("/v1/apps/" + app.id() + "/messages/" + id, app.key()).status()).isEqualTo(404);
    }

    @Test
    void aTopicIsPreviewedForEveryChannelAndADeviceListForItsDevicesChannels() {
        TestApp app = createApp();
        Api.Response put = api().json("PUT", "/v1/apps/" + app.id() + "/devices/phone-1", app.key(),
                Map.of("channel", "apns", "token", "apns-9"));
        assertThat(put.status()).as(put.toString()).isEqualTo(200);

        JsonNode topic = api().json("POST", "/v1/apps/" + app.id() + "/previews", app.key(), Map.of(
                "to", Map.of("topic", "news"), "data", Map.of("silent", "1"))).json().get("channels");
        assertThat(topic.propertyNames()).contains("fcm", "apns", "mqtt");
        assertThat(topic.get("fcm").get("body").get("message").get("token").asString()).isEqualTo("<each device's token>");
        assertThat(topic.get("apns").get("headers").get("apns-push-type").asString()).isEqualTo("background");
        assertThat(topic.get("apns").get("headers").get("apns-priority").asString()).isEqualTo("5");

        JsonNode devices = api().json("POST", "/v1/apps/" + app.id() + "/previews", app.key(), Map.of(
                "to", Map.of("devices", List.of("phone-1", "unknown")), "title", "Hi")).json().get("channels");
        assertThat(devices.propertyNames()).containsExactly("apns");
        assertThat(devices.get("apns").get("target").asString()).isEqualTo("apns-9");
    }

    @Test
    void badInputIsAProblemAsForASend() {
        TestApp app = createApp();
        String path = "/v1/apps/" + app.id() + "/previews";
        assertProblem(api().json("POST", path, app.key(), Map.of("to", Map.of("topic", "news"))), 400);
        assertProblem(api().json("POST", path, app.key(), Map.of("to", Map.of(), "title", "x")), 400);
        assertProblem(api().json("POST", path, null, Map.of("to", Map.of("topic", "news"), "title", "x")), 401);
        assertProblem(api().json("POST", path, createApp().key(), Map.of("to", Map.of("topic", "news"), "title", "x")), 403);
        // The schedule is checked too: a past time, or both times at once, as a send answers them.
        assertProblem(api().json("POST", path, app.key(), Map.of("to", Map.of("topic", "news"), "title", "x",
                "sendAt", Instant.now().minus(Duration.ofHours(1)).toString())), 400);
        Instant later = Instant.now().plus(Duration.ofHours(1));
        assertProblem(api().json("POST", path, app.key(), Map.of("to", Map.of("topic", "news"), "title", "x",
                "sendAt", later.toString(), "sendAtLocalTime", LocalDateTime.ofInstant(later, ZoneOffset.UTC).toString())), 400);
    }
}
