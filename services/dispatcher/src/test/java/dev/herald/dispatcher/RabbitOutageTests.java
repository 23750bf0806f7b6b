package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import dev.herald.store.keys.RedisKeys;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.time.Instant;
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

/** A private RabbitMQ that the test stops and restarts, as an outage would. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RabbitOutageTests {
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
                Map.of("to", Map.of("tokens", java.util.List.of(Map.of("channel", "fcm", "token", "t1"))), "title", "x"),
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
        drainAll();

        rabbit.stop();
        long statusRecords = redis.keys(RedisKeys.KeyPattern.MESSAGE.glob()).get().size();
        Api.Response refused = send(api, "outage-app", key, "during-outage");

        DispatcherIntegrationTest.assertProblem(refused, 503);
        assertThat(refused.header("Retry-After")).contains("5");
        assertThat(redis.keys(RedisKeys.KeyPattern.MESSAGE.glob()).get()).hasSize((int) statusRecords);
        assertThat(redis.exists(RedisKeys.idempotency("outage-app", "during-outage")).get()).isZero();
        Api.Response readiness = api.get("/actuator/health/readiness", null);
        assertThat(readiness.status()).isEqualTo(503);
        assertThat(readiness.json().get("status").asString()).isEqualTo("DOWN");
        assertThat(api.get("/actuator/health/liveness", null).status()).isEqualTo(200);
        assertThat(api.get("/actuator/prometheus", null).body())
                .containsPattern("herald_dispatcher_publish_failures_total\\{reason=\"connection\",service=\"dispatcher\"} [1-9]");

        rabbit.restart();
        Api.Response accepted = awaitAccepted(api, key);

        assertThat(accepted.header("Idempotent-Replayed")).isEmpty();
        String id = accepted.json().get("id").asString();
        Message batch = template.receive(Queues.SEND_NORMAL, 5000);
        assertThat(batch).isNotNull();
        assertThat(Api.JSON.readTree(batch.getBody()).get("messageId").asString()).isEqualTo(id);
        assertThat(api.get("/actuator/health/readiness", null).status()).isEqualTo(200);
    }

    /** The same request (same idempotency key) as the client would retry it, until RabbitMQ is back. */
    private Api.Response awaitAccepted(Api api, String key) throws InterruptedException {
        Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
        while (true) {
            Api.Response response = send(api, "outage-app", key, "during-outage");
            if (response.status() == 202 || Instant.now().isAfter(deadline)) {
                assertThat(response.status()).as(response.toString()).isEqualTo(202);
                return response;
            }
            assertThat(response.status()).as(response.toString()).isEqualTo(503);
            Thread.sleep(500); // a client honouring Retry-After, shortened
        }
    }

    private void drainAll() {
        for (String queue : new String[] {Queues.SEND_NORMAL, Queues.SEND_HIGH, Queues.AUDIENCE}) {
            while (template.receive(queue) != null) {
                // discard
            }
        }
    }
}
