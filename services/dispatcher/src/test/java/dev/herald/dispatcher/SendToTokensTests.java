package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import tools.jackson.databind.JsonNode;

class SendToTokensTests extends DispatcherIntegrationTest {

    private static List<Map<String, String>> tokens(int count, String channel) {
        List<Map<String, String>> tokens = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            tokens.add(Map.of("channel", channel, "token", "tok-" + i));
        }
        return tokens;
    }

    @Test
    void tokensAreQueuedAsBatchesOfFiveHundredOnTheNormalQueue() {
        TestApp app = createApp();
        drain(Queues.SEND_NORMAL);
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", tokens(750, "fcm")),
                "title", "Hello", "body", "World", "data", Map.of("k", "v"),
                "ttl", 3600, "collapseKey", "c1"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        String id = response.json().get("id").asString();
        assertThat(response.json().get("state").asString()).isEqualTo("queued");
        assertThat(response.header("Location")).contains("/v1/apps/" + app.id() + "/messages/" + id);
        assertThat(response.contentType()).startsWith("application/json");

        List<Message> raw = drain(Queues.SEND_NORMAL);
        List<JsonNode> batches = raw.stream().map(m -> Api.JSON.readTree(m.getBody()))
                .filter(b -> id.equals(b.get("messageId").asString())).toList();
        assertThat(batches).hasSize(2);
        assertThat(batches).extracting(b -> b.get("batch").asInt()).containsExactlyInAnyOrder(0, 1);
        assertThat(batches).extracting(b -> b.get("targets").size()).containsExactlyInAnyOrder(500, 250);
        JsonNode first = batches.stream().filter(b -> b.get("batch").asInt() == 0).findFirst().orElseThrow();
        assertThat(first.get("appId").asString()).isEqualTo(app.id());
        assertThat(first.get("priority").asString()).isEqualTo("normal");
        assertThat(first.get("collapseKey").asString()).isEqualTo("c1");
        assertThat(first.at("/notification/title").asString()).isEqualTo("Hello");
        assertThat(first.at("/notification/body").asString()).isEqualTo("World");
        assertThat(first.at("/notification/data").properties()).hasSize(1); // nothing added by the dispatcher
        assertThat(first.at("/notification/data/k").asString()).isEqualTo("v");
        assertThat(first.at("/targets/0/channel").asString()).isEqualTo("fcm");
        assertThat(first.at("/targets/0/token").asString()).isEqualTo("tok-0");
        Instant acceptedAt = Instant.parse(first.get("acceptedAt").asString());
        assertThat(Instant.parse(first.get("expiresAt").asString())).isEqualTo(acceptedAt.plusSeconds(3600));
        assertThat(raw.getFirst().getMessageProperties().getReceivedDeliveryMode()).isEqualTo(MessageDeliveryMode.PERSISTENT);
        assertThat(raw.getFirst().getMessageProperties().getContentType()).isEqualTo("application/json");
    }

    @Test
    void highPriorityGoesToTheHighQueueAndDuplicateTokensAreSentOnce() {
        TestApp app = createApp();
        Api.Response response = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", List.of(Map.of("channel", "apns", "token", "a1"), Map.of("channel", "apns", "token", "a1"),
                        Map.of("channel", "fcm", "token", "a1"))),
                "title", "Now", "priority", "high"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        String id = response.json().get("id").asString();
        List<JsonNode> batches = messagesOf(Queues.SEND_HIGH, id);
        assertThat(batches).hasSize(1);
        assertThat(batches.getFirst().get("targets").size()).isEqualTo(2);
        assertThat(batches.getFirst().get("priority").asString()).isEqualTo("high");
        Instant acceptedAt = Instant.parse(batches.getFirst().get("acceptedAt").asString());
        assertThat(Instant.parse(batches.getFirst().get("expiresAt").asString()))
                .isEqualTo(acceptedAt.plus(Duration.ofDays(28)));
    }

    @Test
    void theStatusIsQueuedAsSoonAsTheSendIsAnswered() {
        TestApp app = createApp();
        Api.Response sent = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", tokens(3, "fcm")), "body", "b"));
        String id = sent.json().get("id").asString();

        Api.Response status = api().get("/v1/apps/" + app.id() + "/messages/" + id, app.key());

        assertThat(status.status()).as(status.toString()).isEqualTo(200);
        JsonNode json = status.json();
        assertThat(json.get("id").asString()).isEqualTo(id);
        assertThat(json.get("state").asString()).isEqualTo("queued");
        assertThat(json.at("/targets/total").asInt()).isEqualTo(3);
        assertThat(json.at("/targets/pending").asInt()).isEqualTo(3);
        assertThat(json.at("/targets/expanded").asBoolean()).isTrue();
        assertThat(json.get("acceptedAt").asString()).isNotBlank();
        assertThat(json.get("queuedAt").asString()).isNotBlank();
        assertThat(json.has("completedAt")).isFalse();
        drain(Queues.SEND_NORMAL);
    }

    @Test
    void messageIdsAreTimeOrdered() {
        TestApp app = createApp();
        String first = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", tokens(1, "fcm")), "body", "1")).json().get("id").asString();
        String second = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", tokens(1, "fcm")), "body", "2")).json().get("id").asString();
        assertThat(first.substring(0, 13)).isLessThanOrEqualTo(second.substring(0, 13));
        assertThat(first).isNotEqualTo(second);
        assertThat(first.charAt(14)).isEqualTo('7');
        drain(Queues.SEND_NORMAL);
    }

    @Test
    void aMessageOfAnotherAppIsNotFoundAndStatsHaveTheDocumentedShape() {
        TestApp app = createApp();
        TestApp other = createApp();
        String id = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", tokens(1, "fcm")), "body", "b")).json().get("id").asString();

        assertProblem(api().get("/v1/apps/" + other.id() + "/messages/" + id, other.key()), 404);
        assertProblem(api().get("/v1/apps/" + app.id() + "/messages/0190a0b0-0000-7000-8000-000000000000", app.key()), 404);
        assertProblem(api().get("/v1/apps/" + app.id() + "/messages/not-an-id", app.key()), 404);

        Api.Response stats = api().get("/v1/apps/" + app.id() + "/stats", app.key());
        assertThat(stats.status()).isEqualTo(200);
        assertThat(stats.json().get("sent").asLong()).isZero();
        assertThat(stats.json().get("failed").isObject()).isTrue();
        assertThat(stats.json().get("expired").asLong()).isZero();
        assertThat(stats.json().get("tokensRemoved").asLong()).isZero();
        drain(Queues.SEND_NORMAL);
    }
}
