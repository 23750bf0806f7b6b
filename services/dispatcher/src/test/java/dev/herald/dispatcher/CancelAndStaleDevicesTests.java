package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Channel;
import dev.herald.contract.Queues;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.store.status.Outcome;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

/** {@code DELETE .../messages/{id}} and {@code GET .../stale-devices}, without a gateway. */
class CancelAndStaleDevicesTests extends DispatcherIntegrationTest {
    @Autowired
    MessageStatusStore status;
    @Autowired
    RedisClusterAsyncCommands<String, String> redis;
    @Autowired
    HeraldFunctions functions;

    private String sendToTopic(TestApp app) {
        Api.Response sent = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("topic", "news"), "title", "Sale"));
        assertThat(sent.status()).as(sent.toString()).isEqualTo(202);
        return sent.json().get("id").asString();
    }

    @Test
    void aQueuedMessageIsCancelledAndTheCancelAnsweredWithItsStatus() {
        TestApp app = createApp();
        String id = sendToTopic(app);

        Api.Response cancelled = api().call("DELETE", "/v1/apps/" + app.id() + "/messages/" + id, app.key(), null, null);
        assertThat(cancelled.status()).as(cancelled.toString()).isEqualTo(202);
        assertThat(cancelled.json().get("state").asString()).isEqualTo("cancelling");
        assertThat(cancelled.json().has("cancelledAt")).isTrue();

        Api.Response again = api().call("DELETE", "/v1/apps/" + app.id() + "/messages/" + id, app.key(), null, null);
        assertThat(again.status()).as("a repeated cancel").isEqualTo(202);
        assertThat(again.json().get("cancelledAt")).isEqualTo(cancelled.json().get("cancelledAt"));
        JsonNode read = api().get("/v1/apps/" + app.id() + "/messages/" + id, app.key()).json();
        assertThat(read.get("state").asString()).isEqualTo("cancelling");
        messagesOf(Queues.AUDIENCE, id); // no gateway here: leave the queue empty for other tests
    }

    @Test
    void aFinishedMessageIsAConflictAndAnotherAppsMessageIsNotFound() {
        TestApp app = createApp();
        TestApp other = createApp();
        String token = "tok-" + UUID.randomUUID();
        Api.Response sent = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", token))), "title", "Hi"));
        String id = sent.json().get("id").asString();
        String target = new dev.herald.contract.Target(Channel.fcm, token, null).key();
        messagesOf(Queues.SEND_NORMAL, id); // no gateway here: leave the queue empty for other tests

        assertProblem(api().call("DELETE", "/v1/apps/" + other.id() + "/messages/" + id, other.key(), null, null), 404);
        assertProblem(api().call("DELETE", "/v1/apps/" + app.id() + "/messages/not-an-id", app.key(), null, null), 404);

        // As the gateway records the one target's outcome.
        status.record(id, app.id(), 0, target, Outcome.sent()).join();
        Api.Response finished = api().call("DELETE", "/v1/apps/" + app.id() + "/messages/" + id, app.key(), null, null);
        assertProblem(finished, 409);
        assertThat(finished.json().get("detail").asString()).contains("finished");
        assertThat(api().get("/v1/apps/" + app.id() + "/messages/" + id, app.key()).json().get("state").asString()).isEqualTo("sent");
    }

    @Test
    void staleDevicesAreListedPageByPageAndLeftOutOfShortDeviceLists() {
        TestApp app = createApp();
        Instant longAgo = Instant.now().minus(Duration.ofDays(40));
        // Devices that registered 40 days ago and never again.
        DeviceRegistry past = new DeviceRegistry(redis, functions, Clock.fixed(longAgo, ZoneOffset.UTC), Duration.ofDays(30));
        for (int i = 0; i < 5; i++) {
            past.register(app.id(), "old-" + i, Channel.fcm, "old-token-" + i, List.of()).join();
        }
        Api.Response fresh = api().json("PUT", "/v1/apps/" + app.id() + "/devices/fresh", app.key(),
                Map.of("channel", "fcm", "token", "fresh-token"));
        assertThat(fresh.json().get("stale").asBoolean()).isFalse();
        assertThat(api().get("/v1/apps/" + app.id() + "/devices/old-0", app.key()).json().get("stale").asBoolean()).isTrue();

        List<String> listed = new ArrayList<>();
        String next = null;
        do {
            Api.Response page = api().get("/v1/apps/" + app.id() + "/stale-devices?limit=2"
                    + (next == null ? "" : "&cursor=" + java.net.URLEncoder.encode(next, java.nio.charset.StandardCharsets.UTF_8)), app.key());
            assertThat(page.status()).as(page.toString()).isEqualTo(200);
            page.json().get("devices").forEach(d -> listed.add(d.get("deviceId").asString()));
            next = page.json().has("next") ? page.json().get("next").asString() : null;
        } while (next != null);
        assertThat(listed).containsExactly("old-0", "old-1", "old-2", "old-3", "old-4");

        for (String limit : List.of("0", "", "1001")) {
            assertProblem(api().get("/v1/apps/" + app.id() + "/stale-devices?limit=" + limit, app.key()), 400);
        }
        assertProblem(api().get("/v1/apps/" + app.id() + "/stale-devices?cursor=bogus", app.key()), 400);

        Api.Response sent = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("devices", List.of("old-0", "fresh")), "title", "Hi"));
        String id = sent.json().get("id").asString();
        assertThat(messagesOf(Queues.SEND_NORMAL, id)).singleElement().satisfies(batch ->
                assertThat(batch.get("targets").values()).extracting(t -> t.get("deviceId").asString()).containsExactly("fresh"));
        assertThat(api().get("/v1/apps/" + app.id() + "/stats", app.key()).json().get("staleTokensSkipped").asInt()).isEqualTo(1);
    }
}
