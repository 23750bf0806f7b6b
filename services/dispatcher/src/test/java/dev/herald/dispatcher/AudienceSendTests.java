package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class AudienceSendTests extends DispatcherIntegrationTest {

    @Test
    void aTopicSendIsOneAudienceJobAndNothingOnTheSendQueues() {
        TestApp app = createApp();
        drain(Queues.SEND_NORMAL);
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("topic", "news"), "title", "Breaking", "ttl", 60));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        String id = response.json().get("id").asString();
        List<JsonNode> jobs = messagesOf(Queues.AUDIENCE, id);
        assertThat(jobs).hasSize(1);
        JsonNode job = jobs.getFirst();
        assertThat(job.get("topic").asString()).isEqualTo("news");
        assertThat(job.get("deviceIds").size()).isZero();
        assertThat(job.get("appId").asString()).isEqualTo(app.id());
        assertThat(job.get("priority").asString()).isEqualTo("normal");
        assertThat(job.at("/notification/title").asString()).isEqualTo("Breaking");
        assertThat(messagesOf(Queues.SEND_NORMAL, id)).isEmpty();

        JsonNode status = api().get("/v1/apps/" + app.id() + "/messages/" + id, app.key()).json();
        assertThat(status.get("state").asString()).isEqualTo("queued");
        assertThat(status.at("/targets/total").asInt()).isZero();
        assertThat(status.at("/targets/expanded").asBoolean()).isFalse();
    }

    @Test
    void aDeviceListWithNoRegisteredDeviceIsLeftToTheGatewayAsOneAudienceJob() {
        TestApp app = createApp();
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("devices", List.of("d1", "d2", "d1")), "data", Map.of("a", "b"), "priority", "high"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        List<JsonNode> jobs = messagesOf(Queues.AUDIENCE, response.json().get("id").asString());
        assertThat(jobs).hasSize(1);
        assertThat(jobs.getFirst().get("deviceIds").values()).extracting(JsonNode::asString).containsExactly("d1", "d2");
        assertThat(jobs.getFirst().has("topic") && !jobs.getFirst().get("topic").isNull()).isFalse();
        assertThat(jobs.getFirst().get("priority").asString()).isEqualTo("high");
    }

    @Test
    void aShortDeviceListIsLookedUpOnAcceptAndQueuedAsBatchesOfItsRegisteredDevices() {
        TestApp app = createApp();
        register(app, "phone", Map.of("channel", "fcm", "token", "fcm-token-1"));
        register(app, "sensor", Map.of("channel", "mqtt"));
        drain(Queues.SEND_HIGH);
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("devices", List.of("phone", "never-registered", "sensor", "phone")), "title", "Hi",
                "priority", "high"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        String id = response.json().get("id").asString();
        assertThat(messagesOf(Queues.AUDIENCE, id)).isEmpty();
        List<JsonNode> batches = messagesOf(Queues.SEND_HIGH, id);
        assertThat(batches).hasSize(1);
        List<JsonNode> targets = batches.getFirst().get("targets").values().stream().toList();
        assertThat(targets).extracting(t -> t.get("deviceId").asString()).containsExactly("phone", "sensor");
        assertThat(targets).extracting(t -> t.get("channel").asString()).containsExactly("fcm", "mqtt");
        assertThat(targets.getFirst().get("token").asString()).isEqualTo("fcm-token-1");

        JsonNode status = api().get("/v1/apps/" + app.id() + "/messages/" + id, app.key()).json();
        assertThat(status.at("/targets/total").asInt()).isEqualTo(2);
        assertThat(status.at("/targets/expanded").asBoolean()).isTrue();
    }

    @Test
    void aDeviceListLongerThanTheLookupLimitIsLeftToTheGateway() {
        TestApp app = createApp();
        register(app, "phone", Map.of("channel", "fcm", "token", "fcm-token-2"));
        List<String> devices = new java.util.ArrayList<>(List.of("phone"));
        for (int i = 0; devices.size() <= 100; i++) { // herald.dispatcher.resolve-devices-up-to is 100
            devices.add("other-" + i);
        }
        drain(Queues.SEND_NORMAL);
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("devices", devices), "title", "Hi"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        String id = response.json().get("id").asString();
        assertThat(messagesOf(Queues.AUDIENCE, id)).singleElement()
                .satisfies(job -> assertThat(job.get("deviceIds").size()).isEqualTo(101));
        assertThat(messagesOf(Queues.SEND_NORMAL, id)).isEmpty();
    }

    private void register(TestApp app, String deviceId, Map<String, Object> device) {
        Api.Response registered = api().json("PUT", "/v1/apps/" + app.id() + "/devices/" + deviceId, app.key(), device);
        assertThat(registered.status()).as(registered.toString()).isLessThan(300);
    }
}
