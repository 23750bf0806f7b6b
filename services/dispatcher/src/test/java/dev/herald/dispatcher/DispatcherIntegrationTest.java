package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;

/**
 * The dispatcher on a real port against real RabbitMQ and Redis (one of each per test JVM); the
 * subclasses share one application context.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
abstract class DispatcherIntegrationTest {
    static final String ADMIN_TOKEN = "admin-token-for-tests-0123456789";
    static final String CRYPTO_KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="; // base64 of 32 bytes

    @DynamicPropertySource
    static void services(DynamicPropertyRegistry registry) {
        LocalRabbit rabbit = LocalRabbit.get();
        LocalRedis redis = LocalRedis.get();
        registry.add("spring.rabbitmq.host", rabbit::host);
        registry.add("spring.rabbitmq.port", rabbit::port);
        registry.add("herald.redis-uri", redis::uri);
        registry.add("herald.crypto-key", () -> CRYPTO_KEY);
        registry.add("herald.dispatcher.admin-token", () -> ADMIN_TOKEN);
    }

    @LocalServerPort
    int port;

    @Autowired
    RabbitTemplate rabbit;

    Api api() {
        return new Api(port);
    }

    /** A new app with a unique id; returns its id and first API key. */
    record TestApp(String id, String key, String keyId) {
    }

    TestApp createApp() {
        return createApp(api());
    }

    static TestApp createApp(Api api) {
        String id = "app-" + UUID.randomUUID().toString().substring(0, 8);
        Api.Response response = api.json("POST", "/v1/apps", ADMIN_TOKEN, Map.of("id", id, "name", "Test " + id));
        assertThat(response.status()).as(response.toString()).isEqualTo(201);
        JsonNode key = response.json().get("apiKey");
        return new TestApp(id, key.get("key").asString(), key.get("keyId").asString());
    }

    /** Everything on the queue now (RabbitMQ confirmed it before the 202, so it is there). */
    List<Message> drain(String queue) {
        List<Message> messages = new ArrayList<>();
        for (Message message = rabbit.receive(queue); message != null; message = rabbit.receive(queue)) {
            messages.add(message);
        }
        return messages;
    }

    /** The messages of one send on a queue, as JSON. */
    List<JsonNode> messagesOf(String queue, String messageId) {
        return drain(queue).stream().map(m -> Api.JSON.readTree(m.getBody()))
                .filter(json -> messageId.equals(json.path("messageId").asString()))
                .toList();
    }

    static void assertProblem(Api.Response response, int status) {
        assertThat(response.status()).as(response.toString()).isEqualTo(status);
        assertThat(response.contentType()).as(response.toString()).startsWith("application/problem+json");
        JsonNode problem = response.json();
        assertThat(problem.path("status").asInt()).isEqualTo(status);
        assertThat(problem.path("title").asString()).isNotBlank();
        // "type" may be absent: it then means about:blank (RFC 9457)
    }
}
