package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import dev.herald.store.keys.RedisKeys;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

class IdempotencyTests extends DispatcherIntegrationTest {

    @Autowired
    RedisClusterAsyncCommands<String, String> redis;

    private Api.Response send(TestApp app, String body, String key) {
        return api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), body, "Idempotency-Key", key);
    }

    @Test
    void aRepeatedRequestReturnsTheSameIdAndIsQueuedOnce() {
        TestApp app = createApp();
        String key = UUID.randomUUID().toString();
        drain(Queues.SEND_NORMAL);

        Api.Response first = send(app, """
                {"to":{"tokens":[{"channel":"fcm","token":"t1"}]},"title":"Hi","data":{"a":"1","b":"2"}}""", key);
        // the same request, formatted differently and with keys in another order
        Api.Response second = send(app, """
                { "data": {"b":"2", "a":"1"}, "title": "Hi", "to": {"tokens": [ {"token":"t1","channel":"fcm"} ]} }""", key);

        assertThat(first.status()).as(first.toString()).isEqualTo(202);
        assertThat(first.header("Idempotent-Replayed")).isEmpty();
        assertThat(second.status()).as(second.toString()).isEqualTo(202);
        assertThat(second.header("Idempotent-Replayed")).contains("true");
        String id = first.json().get("id").asString();
        assertThat(second.json().get("id").asString()).isEqualTo(id);
        assertThat(second.header("Location")).isEqualTo(first.header("Location"));
        assertThat(messagesOf(Queues.SEND_NORMAL, id)).hasSize(1);
        assertThat(drain(Queues.SEND_NORMAL)).isEmpty();
    }

    @Test
    void theSameKeyWithADifferentBodyIs422() {
        TestApp app = createApp();
        String key = UUID.randomUUID().toString();
        assertThat(send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}", key).status()).isEqualTo(202);

        Api.Response other = send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"y\"}", key);

        assertProblem(other, 422);
        assertThat(other.json().get("type").asString()).isEqualTo("urn:herald:problem:idempotency-key-reused");
        drain(Queues.AUDIENCE);
    }

    @Test
    void keysAreScopedToTheApp() {
        TestApp one = createApp();
        TestApp two = createApp();
        String key = UUID.randomUUID().toString();
        String a = send(one, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}", key).json().get("id").asString();
        Api.Response b = send(two, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}", key);
        assertThat(b.status()).isEqualTo(202);
        assertThat(b.json().get("id").asString()).isNotEqualTo(a);
        drain(Queues.AUDIENCE);
    }

    @Test
    void aRequestStillInFlightWithTheSameKeyIs409WithRetryAfter() throws Exception {
        TestApp app = createApp();
        String key = UUID.randomUUID().toString();
        String body = "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}";
        // Learn the request hash from a first claim, then make it look like it was never queued and just claimed.
        send(app, body, key);
        String value = redis.get(RedisKeys.idempotency(app.id(), key)).get();
        String[] parts = value.split("\\|");
        String inFlight = UUID.randomUUID() + "|" + parts[1] + "|" + System.currentTimeMillis();
        redis.set(RedisKeys.idempotency(app.id(), key), inFlight).get();

        Api.Response response = send(app, body, key);

        assertProblem(response, 409);
        assertThat(response.header("Retry-After")).contains("1");
        assertThat(redis.get(RedisKeys.idempotency(app.id(), key)).get()).isEqualTo(inFlight);
        drain(Queues.AUDIENCE);
    }

    @Test
    void anAbandonedClaimIsTakenOverAndTheMessageSent() throws Exception {
        TestApp app = createApp();
        String key = UUID.randomUUID().toString();
        String body = "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}";
        send(app, body, key);
        String[] parts = redis.get(RedisKeys.idempotency(app.id(), key)).get().split("\\|");
        // claimed an hour ago by a dispatcher that died before queueing
        redis.set(RedisKeys.idempotency(app.id(), key), UUID.randomUUID() + "|" + parts[1] + "|"
                + (System.currentTimeMillis() - 3_600_000)).get();
        drain(Queues.AUDIENCE);

        Api.Response response = send(app, body, key);

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        assertThat(response.header("Idempotent-Replayed")).isEmpty();
        assertThat(messagesOf(Queues.AUDIENCE, response.json().get("id").asString())).hasSize(1);
    }

    @Test
    void aMalformedKeyIs400() {
        TestApp app = createApp();
        for (String bad : List.of("", " ", "x".repeat(256), "tab\there")) {
            Api.Response response = send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}", bad);
            assertThat(response.status()).as("[" + bad + "] -> " + response).isEqualTo(400);
            assertProblem(response, 400);
            assertThat(response.json().at("/errors/0/field").asString()).isEqualTo("Idempotency-Key");
        }
        assertThat(send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}", "order 42: retry #1").status()).isEqualTo(202);
        drain(Queues.AUDIENCE);
    }

    @Test
    void theKeyExpiresAfterTheConfiguredTtl() throws Exception {
        TestApp app = createApp();
        String key = UUID.randomUUID().toString();
        send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}", key);
        long ttl = redis.ttl(RedisKeys.idempotency(app.id(), key)).get();
        assertThat(ttl).isBetween(86_000L, 86_400L);
        drain(Queues.AUDIENCE);
    }
}
