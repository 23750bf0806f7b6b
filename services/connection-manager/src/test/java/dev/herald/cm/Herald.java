package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.cm.mqtt.MqttServer;
import dev.herald.dispatcher.DispatcherApplication;
import dev.herald.gateway.GatewayApplication;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The platform in this JVM for tests: dispatcher, gateway and one connection manager, each its own
 * Spring context, against the test RabbitMQ and Redis. Started once per test JVM.
 */
final class Herald {
    static final String CRYPTO_KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    static final String ADMIN_TOKEN = "admin-token-for-tests-0123456789";
    static final JsonMapper JSON = JsonMapper.builder().build();
    private static Herald instance;

    private final ConfigurableApplicationContext dispatcher;
    private final ConfigurableApplicationContext gateway;
    private final ConfigurableApplicationContext cm;
    private final TestTls tls = TestTls.create();
    private final HttpClient http = HttpClient.newHttpClient();

    /** How a registered MQTT device connects. */
    record Device(String appId, String deviceId, String password, String topic) {
    }

    /** An app and its API key. */
    record App(String id, String key) {
    }

    private Herald() {
        dispatcher = start(DispatcherApplication.class, "--herald.dispatcher.admin-token=" + ADMIN_TOKEN);
        gateway = start(GatewayApplication.class);
        // Every listener: plain MQTT, MQTT over TLS, WebSocket and WebSocket over TLS.
        cm = start(ConnectionManagerApplication.class, connectionManagerArgs("cm-test-" + UUID.randomUUID().toString().substring(0, 6),
                "--herald.cm.mqtt.tls.enabled=true", "--herald.cm.mqtt.tls.port=0",
                "--herald.cm.mqtt.tls.certificate-dir=" + tls.secret, "--herald.cm.mqtt.tls.reload-check=200ms",
                "--herald.cm.mqtt.websocket.enabled=true", "--herald.cm.mqtt.websocket.port=0",
                "--herald.cm.mqtt.websocket.tls-port=0"));
    }

    static synchronized Herald get() {
        if (instance == null) {
            instance = new Herald();
        }
        return instance;
    }

    static List<String> commonArgs() {
        return List.of("--server.port=0",
                "--spring.rabbitmq.host=" + LocalRabbit.get().host(),
                "--spring.rabbitmq.port=" + LocalRabbit.get().port(),
                "--herald.redis-uri=" + LocalRedis.get().uri(),
                "--herald.crypto-key=" + CRYPTO_KEY,
                "--spring.main.banner-mode=off");
    }

    private static ConfigurableApplicationContext start(Class<?> application, String... extra) {
        return start(application, CRYPTO_KEY, List.of(), extra);
    }

    /** A service of the platform under {@code cryptoKey}, still accepting what {@code previousKeys} issued (a key rotation). */
    private static ConfigurableApplicationContext start(Class<?> application, String cryptoKey, List<String> previousKeys,
                                                        String... extra) {
        List<String> args = new ArrayList<>(commonArgs().stream().filter(arg -> !arg.startsWith("--herald.crypto-key=")).toList());
        args.add("--herald.crypto-key=" + cryptoKey);
        if (!previousKeys.isEmpty()) {
            args.add("--herald.crypto-previous-keys=" + String.join(",", previousKeys));
        }
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(application).run(args.toArray(String[]::new));
    }

    static ConfigurableApplicationContext startConnectionManager(String nodeId) {
        return start(ConnectionManagerApplication.class, connectionManagerArgs(nodeId));
    }

    /** A connection manager beside this platform's, under other crypto keys (a key rotation). */
    static ConfigurableApplicationContext startConnectionManager(String nodeId, String cryptoKey, List<String> previousKeys) {
        return start(ConnectionManagerApplication.class, cryptoKey, previousKeys, connectionManagerArgs(nodeId));
    }

    /** A dispatcher beside this platform's, under other crypto keys (a key rotation); {@link #call(ConfigurableApplicationContext, String, String, String, Object, int)} reaches it. */
    static ConfigurableApplicationContext startDispatcher(String cryptoKey, List<String> previousKeys) {
        return start(DispatcherApplication.class, cryptoKey, previousKeys, "--herald.dispatcher.admin-token=" + ADMIN_TOKEN);
    }

    private static String[] connectionManagerArgs(String nodeId, String... extra) {
        List<String> args = new ArrayList<>(List.of("--herald.cm.node-id=" + nodeId, "--herald.cm.mqtt.port=0",
                "--herald.cm.mqtt.host=127.0.0.1", "--herald.cm.expiry-sweep=1s"));
        args.addAll(List.of(extra));
        return args.toArray(String[]::new);
    }

    int mqttPort() {
        return cm.getBean(MqttServer.class).port();
    }

    int port(MqttServer.Listener listener) {
        return cm.getBean(MqttServer.class).port(listener);
    }

    /** The certificates of the connection manager's TLS listeners. */
    TestTls tls() {
        return tls;
    }

    /** An MQTT device's current connection parameters, as its app reads them. */
    Device readMqtt(App app, String deviceId) {
        JsonNode mqtt = call("GET", "/v1/apps/" + app.id() + "/devices/" + deviceId, app.key(), null, 200).get("mqtt");
        return new Device(app.id(), deviceId, mqtt.get("password").asString(), mqtt.get("topic").asString());
    }

    /** Revokes a device's MQTT credentials through the admin API. */
    void revokeMqtt(App app, String deviceId) {
        call("DELETE", "/v1/apps/" + app.id() + "/devices/" + deviceId + "/mqtt-credentials", ADMIN_TOKEN, null, 204);
    }

    int cmHttpPort() {
        return ((WebServerApplicationContext) cm).getWebServer().getPort();
    }

    App createApp() {
        String id = "app-" + UUID.randomUUID().toString().substring(0, 8);
        JsonNode created = call("POST", "/v1/apps", ADMIN_TOKEN, Map.of("id", id, "name", id), 201);
        return new App(id, created.get("apiKey").get("key").asString());
    }

    Device registerMqtt(App app, String deviceId) {
        JsonNode device = call("PUT", "/v1/apps/" + app.id() + "/devices/" + deviceId, app.key(),
                Map.of("channel", "mqtt", "topics", List.of("news")), 200);
        JsonNode mqtt = device.get("mqtt");
        assertThat(mqtt.get("clientId").asString()).isEqualTo(deviceId);
        assertThat(mqtt.get("username").asString()).isEqualTo(app.id());
        return new Device(app.id(), deviceId, mqtt.get("password").asString(), mqtt.get("topic").asString());
    }

    /** Sends to the given devices; returns the message id. */
    String send(App app, Map<String, Object> message) {
        return call("POST", "/v1/apps/" + app.id() + "/messages", app.key(), message, 202).get("id").asString();
    }

    JsonNode status(App app, String messageId) {
        return call("GET", "/v1/apps/" + app.id() + "/messages/" + messageId, app.key(), null, 200);
    }

    String state(App app, String messageId) {
        return status(app, messageId).get("state").asString();
    }

    JsonNode call(String method, String path, String token, Object body, int expectedStatus) {
        return call(dispatcher, method, path, token, body, expectedStatus);
    }

    /** A call to the API of the given dispatcher. */
    JsonNode call(ConfigurableApplicationContext api, String method, String path, String token, Object body, int expectedStatus) {
        int apiPort = ((WebServerApplicationContext) api).getWebServer().getPort();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + apiPort + path))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
        try {
            HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(method + " " + path + ": " + response.body()).isEqualTo(expectedStatus);
            return response.body().isEmpty() ? null : JSON.readTree(response.body());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Every key in Redis, written by the dispatcher, gateway and connection manager running here, has
     * a shape the store's RedisKeys defines: a service that invents a key of its own fails this.
     */
    @SuppressWarnings("unchecked")
    List<String> keysOfUndefinedShape() {
        RedisClusterAsyncCommands<String, String> redis = cm.getBean(RedisClusterAsyncCommands.class);
        return redis.keys("*").toCompletableFuture().join().stream()
                .filter(key -> RedisKeys.KeyPattern.of(key).isEmpty())
                .toList();
    }

    /** Redis's own view of a key's expiry: ms left, -1 if it has none, -2 if it is gone. */
    @SuppressWarnings("unchecked")
    long pttl(String key) {
        RedisClusterAsyncCommands<String, String> redis = cm.getBean(RedisClusterAsyncCommands.class);
        return redis.pttl(key).toCompletableFuture().join();
    }

    /** Messages waiting in the device's box for its PUBACK. */
    long boxSize(Device device) {
        return cm.getBean(MqttOutbox.class).size(device.appId(), device.deviceId()).join();
    }

    String metrics() {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cmHttpPort() + "/actuator/prometheus")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
