package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Channel;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.store.mqtt.DeviceSessions;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.store.status.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

/** The API calls the console adds (message list, stats history, device by token, platform) and its pages. */
class ConsoleApiTests extends DispatcherIntegrationTest {
    @Autowired
    MessageStatusStore status;
    @Autowired
    ReplicaLeases leases;
    @Autowired
    DeviceSessions sessions;

    private String send(TestApp app, String token) {
        Api.Response sent = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", token))), "title", "Hi"));
        assertThat(sent.status()).as(sent.toString()).isEqualTo(202);
        String id = sent.json().get("id").asString();
        messagesOf(Queues.SEND_NORMAL, id); // no gateway here: leave the queue empty for other tests
        return id;
    }

    private List<String> ids(JsonNode page) {
        List<String> ids = new ArrayList<>();
        page.get("messages").forEach(message -> ids.add(message.get("id").asString()));
        return ids;
    }

    @Test
    void recentMessagesAreListedNewestFirstInPagesAndFilteredByState() {
        TestApp app = createApp();
        TestApp other = createApp();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            sent.add(send(app, "tok-" + i));
        }
        send(other, "tok-other");
        status.record(sent.get(1), app.id(), 0, new Target(Channel.fcm, "tok-1", null).key(),
                new Outcome(Outcome.Kind.failed, "UNREGISTERED", true)).join();

        String messages = "/v1/apps/" + app.id() + "/messages";
        JsonNode first = api().get(messages + "?limit=3", app.key()).json();
        assertThat(ids(first)).hasSize(3).isSubsetOf(sent);
        JsonNode second = api().get(messages + "?limit=3&before=" + first.get("next").asString(), app.key()).json();
        List<String> all = new ArrayList<>(ids(first));
        all.addAll(ids(second));
        assertThat(all).containsExactlyInAnyOrderElementsOf(sent);
        assertThat(second.has("next")).as("the last page has no next cursor").isFalse();

        JsonNode failed = api().get(messages + "?state=failed", app.key()).json();
        assertThat(ids(failed)).containsExactly(sent.get(1));
        assertThat(failed.get("messages").get(0).get("failures").get("UNREGISTERED").asLong()).isEqualTo(1);

        assertProblem(api().get(messages + "?state=bogus", app.key()), 400);
        // Every listing reads limit one way (PageLimits): empty, signed or not a number is no default.
        for (String limit : List.of("0", "", "+5", "101", "x", "99999999999")) {
            assertProblem(api().get(messages + "?limit=" + limit, app.key()), 400);
        }
        assertProblem(api().get(messages + "?before=x", app.key()), 400);
        // Only a cursor as a page gives it (the document's pattern): not empty, no sign, no 19-digit overflow.
        for (String cursor : List.of("", "+1.0", "1.-0", "1234567890123456789.0", "1.2.3")) {
            assertProblem(api().get(messages + "?before=" + cursor, app.key()), 400);
        }
        assertProblem(api().get(messages, other.key()), 403);
        assertProblem(api().get(messages, null), 401);
    }

    @Test
    void statsHistoryCountsOutcomesPerMinuteAndHour() {
        TestApp app = createApp();
        String id = send(app, "tok-h");
        status.record(id, app.id(), 0, new Target(Channel.fcm, "tok-h", null).key(), Outcome.sent()).join();

        JsonNode hour = api().get("/v1/apps/" + app.id() + "/stats/history?window=hour", app.key()).json();
        assertThat(hour.get("bucket").asString()).isEqualTo("minute");
        assertThat(hour.get("buckets")).hasSize(60);
        long sent = 0;
        for (JsonNode bucket : hour.get("buckets")) {
            sent += bucket.get("sent").asLong();
        }
        assertThat(sent).isEqualTo(1);
        JsonNode week = api().get("/v1/apps/" + app.id() + "/stats/history?window=week", app.key()).json();
        assertThat(week.get("bucket").asString()).isEqualTo("hour");
        assertThat(week.get("buckets")).hasSize(168);
        assertProblem(api().get("/v1/apps/" + app.id() + "/stats/history?window=year", app.key()), 400);
    }

    @Test
    void aDeviceIsFoundByItsToken() {
        TestApp app = createApp();
        String token = "\"><img/src=x/onerror=alert(1)>";
        Api.Response put = api().json("PUT", "/v1/apps/" + app.id() + "/devices/phone-1", app.key(),
                Map.of("channel", "fcm", "token", token, "topics", List.of("news")));
        assertThat(put.status()).as(put.toString()).isEqualTo(200);

        String query = "/v1/apps/" + app.id() + "/devices?channel=fcm&token="
                + java.net.URLEncoder.encode(token, java.nio.charset.StandardCharsets.UTF_8);
        JsonNode found = api().get(query, app.key()).json().get("devices");
        assertThat(found).hasSize(1);
        assertThat(found.get(0).get("deviceId").asString()).isEqualTo("phone-1");
        assertThat(found.get(0).get("token").asString()).isEqualTo(token);
        assertThat(api().get(query.replace("channel=fcm", "channel=apns"), app.key()).json().get("devices")).isEmpty();
        assertProblem(api().get(query.replace("channel=fcm", "channel=sms"), app.key()), 400);
    }

    @Test
    void thePlatformViewShowsQueuesAndTheLiveReplicasToTheAdminOnly() {
        Replica node = Replica.of("console-test-node", Instant.parse("2026-11-24T09:00:00Z"), Map.of("connections", 7L));
        Replica gateway = Replica.of("console-test-gateway", Instant.parse("2026-11-24T09:00:01Z"),
                Map.of("inFlight", 2L, "deliveriesPerSecond", 40L));
        leases.renew(Service.CONNECTION_MANAGER, node, Duration.ofMinutes(1)).join();
        leases.renew(Service.GATEWAY, gateway, Duration.ofMinutes(1)).join();
        Api.Response platform = api().get("/v1/platform", ADMIN_TOKEN);
        assertThat(platform.status()).as(platform.toString()).isEqualTo(200);
        JsonNode view = platform.json();
        List<String> queues = new ArrayList<>();
        view.get("queues").forEach(queue -> queues.add(queue.get("name").asString()));
        assertThat(queues).contains(Queues.SEND_HIGH, Queues.SEND_NORMAL, Queues.AUDIENCE, Queues.DEAD);
        assertThat(view.get("queues").get(0).get("messages").asLong()).isNotNegative();
        assertThat(view.get("mqttConnections").asLong()).isGreaterThanOrEqualTo(7);
        List<String> gateways = new ArrayList<>();
        view.get("gateways").forEach(replica -> gateways.add(replica.get("id").asString()));
        assertThat(gateways).contains("console-test-gateway");
        JsonNode shown = null;
        for (JsonNode replica : view.get("connectionManagers")) {
            shown = replica.get("id").asString().equals("console-test-node") ? replica : shown;
        }
        assertThat(shown).as(view.toString()).isNotNull();
        assertThat(shown.get("startedAt").asString()).isEqualTo("2026-11-24T09:00:00Z");
        assertThat(shown.get("version").asString()).isNotBlank();
        assertThat(shown.get("figures").get("connections").asLong()).isEqualTo(7);
        leases.drop(Service.CONNECTION_MANAGER, node.id()).join();
        leases.drop(Service.GATEWAY, gateway.id()).join();

        assertProblem(api().get("/v1/platform", createApp().key()), 401);
    }

    @Test
    void anMqttDeviceShowsItsLastConnectAndWhetherItIsConnectedNow() {
        TestApp app = createApp();
        String device = "/v1/apps/" + app.id() + "/devices/sensor-1";
        JsonNode registered = api().json("PUT", device, app.key(), Map.of("channel", "mqtt")).json().get("mqtt");
        assertThat(registered.has("lastConnectAt")).as("never connected").isFalse();
        assertThat(registered.get("connected").asBoolean()).isFalse();

        // What the connection manager does at CONNECT (its tests connect a real client), on a live node.
        Instant before = Instant.now().minusSeconds(1);
        leases.renew(Service.CONNECTION_MANAGER, Replica.of("console-test-cm", before, Map.of()), Duration.ofMinutes(1)).join();
        DeviceSessions.Holder holder = new DeviceSessions.Holder("console-test-cm", "1");
        assertThat(sessions.claim(app.id(), "sensor-1", holder, 0).join().granted()).isTrue();
        JsonNode online = api().get(device, app.key()).json().get("mqtt");
        assertThat(Instant.parse(online.get("lastConnectAt").asString())).isBetween(before, Instant.now());
        assertThat(online.get("connected").asBoolean()).isTrue();

        sessions.release(app.id(), "sensor-1", holder).join();
        JsonNode offline = api().get(device, app.key()).json().get("mqtt");
        assertThat(offline.get("connected").asBoolean()).isFalse();
        assertThat(offline.get("lastConnectAt").asString()).isEqualTo(online.get("lastConnectAt").asString());
        leases.drop(Service.CONNECTION_MANAGER, "console-test-cm").join();
    }

    @Test
    void theConsolePagesComeWithAStrictContentSecurityPolicy() {
        Api.Response page = api().get("/console/", null);
        assertThat(page.status()).as(page.toString()).isEqualTo(200);
        assertThat(page.body()).contains("<div id=\"app\"");
        String policy = page.header("Content-Security-Policy").orElseThrow();
        assertThat(policy).contains("script-src 'self'", "frame-ancestors 'none'", "default-src 'none'")
                .doesNotContain("unsafe-inline", "unsafe-eval");
        assertThat(page.header("Cache-Control")).contains("no-store");
        assertThat(page.header("X-Content-Type-Options")).contains("nosniff");
        assertThat(api().get("/console", null).status()).isEqualTo(302);
    }
}
