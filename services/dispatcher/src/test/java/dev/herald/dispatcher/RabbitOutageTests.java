package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import dev.herald.store.keys.RedisKeys;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** A private RabbitMQ that the tests stop and restart, as an outage would, or whose resource alarms they raise. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RabbitOutageTests {
    /** The dispatcher's publish timeout (its default): the longest a send may wait for a confirm. */
    private static final Duration PUBLISH_TIMEOUT = Duration.ofSeconds(5);
    private static LocalRabbit rabbit;

    @DynamicPropertySource
    static void services(DynamicPropertyRegistry registry) {
        rabbit = LocalRabbit.start();
        registry.add("spring.rabbitmq.host", rabbit::host);
        registry.add("spring.rabbitmq.port", rabbit::port);
        registry.add("herald.redis-uri", LocalRedis.get()::uri);
        registry.add("herald.crypto-key", () -> DispatcherIntegrationTest.CRYPTO_KEY);
        registry.add("herald.dispatcher.admin-token", () -> DispatcherIntegrationTest.ADMIN_TOKEN);
    }

    @AfterAll
    static void stopRabbit() {
        rabbit.stop();
    }

    @LocalServerPort
    int port;

    @Autowired
    RedisClusterAsyncCommands<String, String> redis;

    @Autowired
    RabbitTemplate template;

    private Api.Response send(Api api, String appId, String key, String idempotencyKey) {
        return api.json("POST", "/v1/apps/" + appId + "/messages", key,
                Map.of("to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "t1"))), "title", "x"),
                "Idempotency-Key", idempotencyKey);
    }

    @Test
    void whileRabbitIsDownSendsAre503AndLeaveNothingBehindAndAfterItsRestartTheySucceed() throws Exception {
        Api api = new Api(port);
        Api.Response created = api.json("POST", "/v1/apps", DispatcherIntegrationTest.ADMIN_TOKEN,
                Map.of("id", "outage-app", "name", "Outage"));
        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        String key = created.json().at("/apiKey/key").asString();
        assertThat(send(api, "outage-app", key, "warm-up").status()).isEqualTo(202);
        Api.Response registered = api.json("PUT", "/v1/apps/outage-app/devices/sensor", key, Map.of("channel", "mqtt"));
        assertThat(registered.status()).as(registered.toString()).isLessThan(300);
        drainAll();

        rabbit.stop();
        long statusRecords = redis.keys(RedisKeys.KeyPattern.MESSAGE.glob()).get().size();
        Api.Response refused = send(api, "outage-app", key, "during-outage");
        // A single MQTT device's send is boxed before it is queued: refused, it must leave the box too,
        // or the device would get a message whose sender was told to send it again.
        Api.Response refusedToDevice = api.json("POST", "/v1/apps/outage-app/messages", key,
                Map.of("to", Map.of("devices", List.of("sensor")), "title", "x"));

        DispatcherIntegrationTest.assertProblem(refused, 503);
        assertThat(refused.header("Retry-After")).contains("5");
        DispatcherIntegrationTest.assertProblem(refusedToDevice, 503);
        assertThat(redis.zcard(RedisKeys.mqttBox("outage-app", "sensor")).get()).isZero();
        assertThat(redis.keys(RedisKeys.KeyPattern.MESSAGE.glob()).get()).hasSize((int) statusRecords);
        assertThat(redis.exists(RedisKeys.idempotency("outage-app", "during-outage")).get()).isZero();
        Api.Response readiness = api.get("/actuator/health/readiness", null);
        assertThat(readiness.status()).isEqualTo(503);
        assertThat(readiness.json().get("status").asString()).isEqualTo("DOWN");
        assertThat(api.get("/actuator/health/liveness", null).status()).isEqualTo(200);
        assertThat(api.get("/actuator/prometheus", null).body())
                .containsPattern("herald_dispatcher_publish_failures_total\\{reason=\"connection\",service=\"dispatcher\"} [1-9]");

        rabbit.restart();
        Api.Response accepted = awaitAccepted(api, "outage-app", key, "during-outage");

        assertThat(accepted.header("Idempotent-Replayed")).isEmpty();
        String id = accepted.json().get("id").asString();
        Message batch = template.receive(Queues.SEND_NORMAL, 5000);
        assertThat(batch).isNotNull();
        assertThat(Api.JSON.readTree(batch.getBody()).get("messageId").asString()).isEqualTo(id);
        assertThat(api.get("/actuator/health/readiness", null).status()).isEqualTo(200);
    }

    /**
     * RabbitMQ's resource alarms raised with rabbitmqctl: while the broker blocks publishers, sends
     * are answered 503 with Retry-After and problem+json at once, never left hanging, and leave
     * nothing behind; when the alarm clears, the same request is accepted.
     */
    @Test
    void duringAMemoryOrDiskAlarmSendsAre503AtOnceAndAfterItClearsTheyAreAccepted() throws Exception {
        Api api = new Api(port);
        Api.Response created = api.json("POST", "/v1/apps", DispatcherIntegrationTest.ADMIN_TOKEN,
                Map.of("id", "alarm-app", "name", "Alarm"));
        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        String key = created.json().at("/apiKey/key").asString();
        assertThat(send(api, "alarm-app", key, "warm-up").status()).isEqualTo(202);
        drainAll();

        String[][] alarms = {
            {"set_vm_memory_high_watermark", "0"}, // 0: the memory alarm goes off at once
            {"set_disk_free_limit", "1000000GB"},
        };
        String[][] clears = {
            {"set_vm_memory_high_watermark", "0.4"},
            {"set_disk_free_limit", "50MB"},
        };
        for (int i = 0; i < alarms.length; i++) {
            String idempotencyKey = "during-alarm-" + i;
            long statusRecords = redis.keys(RedisKeys.KeyPattern.MESSAGE.glob()).get().size();
            rabbit.ctl(alarms[i]);
            int waitedForConfirm = 0;
            for (int attempt = 0; attempt < 3; attempt++) {
                Instant before = Instant.now();
                Api.Response refused = send(api, "alarm-app", key, idempotencyKey);
                Duration took = Duration.between(before, Instant.now());
                System.out.printf("RabbitOutageTests alarm %s: send %d answered %d in %d ms%n", alarms[i][0], attempt,
                        refused.status(), took.toMillis());
                DispatcherIntegrationTest.assertProblem(refused, 503);
                assertThat(refused.header("Retry-After")).contains("5");
                // The first send may be the one that learns of the block (it waits for its confirm
                // at most the publish timeout); the next ones are refused without trying.
                assertThat(took).as("answer time of send %d", attempt)
                        .isLessThan(attempt == 0 ? PUBLISH_TIMEOUT.plusSeconds(3) : Duration.ofSeconds(1));
                if (took.compareTo(PUBLISH_TIMEOUT) >= 0) {
                    waitedForConfirm++;
                }
            }
            assertThat(redis.keys(RedisKeys.KeyPattern.MESSAGE.glob()).get()).hasSize((int) statusRecords);
            assertThat(redis.exists(RedisKeys.idempotency("alarm-app", idempotencyKey)).get()).isZero();
            assertThat(new Api(port).get("/actuator/prometheus", null).body())
                    .containsPattern("herald_dispatcher_publish_failures_total\\{reason=\"(blocked|timeout)\",service=\"dispatcher\"} [1-9]");

            rabbit.ctl(clears[i]);
            Api.Response accepted = awaitAccepted(api, "alarm-app", key, idempotencyKey);
            String id = accepted.json().get("id").asString();
            List<String> queued = drainAll().stream()
                    .map(batch -> Api.JSON.readTree(batch.getBody()).get("messageId").asString()).toList();
            // The window: a send published as the alarm went off was read by RabbitMQ but not
            // confirmed before the publish timeout, so it was answered 503, yet the broker queues it
            // once the alarm clears. Only such a send (at most one per send that waited for its
            // confirm); every later one was refused without being published.
            System.out.printf("RabbitOutageTests alarm %s: %d send(s) waited for a confirm, %d queued after the alarm cleared "
                    + "besides the accepted one%n", alarms[i][0], waitedForConfirm, queued.size() - 1);
            assertThat(queued).as("queued after the %s alarm cleared", alarms[i][0]).contains(id)
                    .hasSizeLessThanOrEqualTo(1 + waitedForConfirm);
        }
    }

    /** The same request (same idempotency key) as the client would retry it, until RabbitMQ takes it again. */
    private Api.Response awaitAccepted(Api api, String appId, String key, String idempotencyKey) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (true) {
            Api.Response response = send(api, appId, key, idempotencyKey);
            if (response.status() == 202 || Instant.now().isAfter(deadline)) {
                assertThat(response.status()).as(response.toString()).isEqualTo(202);
                return response;
            }
            assertThat(response.status()).as(response.toString()).isEqualTo(503);
            Thread.sleep(200); // a client honouring Retry-After, shortened
        }
    }

    private List<Message> drainAll() {
        List<Message> drained = new ArrayList<>();
        for (String queue : new String[] {Queues.SEND_NORMAL, Queues.SEND_HIGH, Queues.AUDIENCE}) {
            for (Message message = template.receive(queue); message != null; message = template.receive(queue)) {
                drained.add(message);
            }
        }
        return drained;
    }
}
