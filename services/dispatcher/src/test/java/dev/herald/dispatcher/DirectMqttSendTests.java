package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.contract.Queues;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.mqtt.MqttAddresses;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.beans.factory.annotation.Autowired;
import tools.jackson.databind.JsonNode;

/**
 * A send to one MQTT device goes past the send queue and the gateway when a connection-manager
 * node holds the device: the dispatcher boxes it and publishes the copy to that node's queue itself
 * (herald.dispatcher.direct-mqtt). Anything else about the device (offline, its node's queue gone,
 * a second device in the send) takes the send queue as before. The node here is a lease in Redis
 * and a queue declared as the connection manager declares its own.
 */
class DirectMqttSendTests extends DispatcherIntegrationTest {
    @Autowired
    RedisClusterAsyncCommands<String, String> redis;

    @Autowired
    ReplicaLeases leases;

    private final String node = "test-node-" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void removeNode() {
        admin().deleteQueue(MqttAddresses.nodeQueue(node));
    }

    @Test
    void aSendToOneConnectedDeviceGoesToItsNodesQueueAndItsBoxNotToTheSendQueue() throws Exception {
        TestApp app = createApp();
        register(app, "sensor");
        connect(app, "sensor", true);
        drain(Queues.SEND_NORMAL);

        Api.Response response = send(app, List.of("sensor"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        String id = response.json().get("id").asString();
        List<JsonNode> copies = messagesOf(MqttAddresses.nodeQueue(node), id);
        assertThat(copies).singleElement().satisfies(copy -> {
            assertThat(copy.get("deviceId").asString()).isEqualTo("sensor");
            assertThat(copy.get("appId").asString()).isEqualTo(app.id());
            assertThat(Api.JSON.readTree(copy.get("payload").asString()).get("title").asString()).isEqualTo("Hi");
        });
        assertThat(messagesOf(Queues.SEND_NORMAL, id)).isEmpty();
        assertThat(redis.zrange(RedisKeys.mqttBox(app.id(), "sensor"), 0, -1).get()).containsExactly(id);
        assertThat(redis.zscore(RedisKeys.mqttExpiries(), RedisKeys.mqttBox(app.id(), "sensor")).get()).isNotNull();
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                assertThat(redis.hget(RedisKeys.message(id), "queuedAt").get()).isNotNull());
        assertThat(api().get("/actuator/prometheus", null).body())
                .containsPattern("herald_dispatcher_mqtt_handoffs_total\\{placement=\"live\",service=\"dispatcher\"} [1-9]");
    }

    @Test
    void aRetriedSendWithTheSameIdempotencyKeyReachesTheNodeOnce() throws Exception {
        TestApp app = createApp();
        register(app, "meter");
        connect(app, "meter", true);

        Api.Response first = send(app, List.of("meter"), "Idempotency-Key", "k-1");
        Api.Response again = send(app, List.of("meter"), "Idempotency-Key", "k-1");

        assertThat(first.status()).as(first.toString()).isEqualTo(202);
        assertThat(again.status()).as(again.toString()).isEqualTo(202);
        String id = first.json().get("id").asString();
        assertThat(again.json().get("id").asString()).isEqualTo(id);
        assertThat(again.header("Idempotent-Replayed")).contains("true");
        assertThat(drain(MqttAddresses.nodeQueue(node))).hasSize(1);
        assertThat(redis.zrange(RedisKeys.mqttBox(app.id(), "meter"), 0, -1).get()).containsExactly(id);
    }

    @Test
    void aSendToAnOfflineDeviceIsBoxedAndQueuedForTheGatewayAsBefore() throws Exception {
        TestApp app = createApp();
        register(app, "sleeper");
        drain(Queues.SEND_NORMAL);

        Api.Response response = send(app, List.of("sleeper"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        String id = response.json().get("id").asString();
        assertThat(messagesOf(Queues.SEND_NORMAL, id)).singleElement()
                .satisfies(batch -> assertThat(batch.at("/targets/0/deviceId").asString()).isEqualTo("sleeper"));
        assertThat(redis.zrange(RedisKeys.mqttBox(app.id(), "sleeper"), 0, -1).get()).containsExactly(id);
    }

    @Test
    void aDeviceWhoseNodeHasNoQueueLeftIsQueuedForTheGateway() throws Exception {
        TestApp app = createApp();
        register(app, "orphan");
        connect(app, "orphan", false);
        drain(Queues.SEND_NORMAL);

        Api.Response response = send(app, List.of("orphan"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        assertThat(messagesOf(Queues.SEND_NORMAL, response.json().get("id").asString())).hasSize(1);
    }

    @Test
    void aSendToTwoConnectedDevicesTakesTheSendQueue() {
        TestApp app = createApp();
        register(app, "left");
        register(app, "right");
        connect(app, "left", true);
        connect(app, "right", true);
        drain(Queues.SEND_NORMAL);

        Api.Response response = send(app, List.of("left", "right"));

        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        String id = response.json().get("id").asString();
        assertThat(messagesOf(Queues.SEND_NORMAL, id)).hasSize(1);
        assertThat(messagesOf(MqttAddresses.nodeQueue(node), id)).isEmpty();
    }

    private Api.Response send(TestApp app, List<String> devices, String... headers) {
        return api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(),
                Map.of("to", Map.of("devices", devices), "title", "Hi"), headers);
    }

    private void register(TestApp app, String deviceId) {
        Api.Response registered = api().json("PUT", "/v1/apps/" + app.id() + "/devices/" + deviceId, app.key(),
                Map.of("channel", "mqtt"));
        assertThat(registered.status()).as(registered.toString()).isLessThan(300);
    }

    /** The device's session on {@code node}, whose lease lives; with the node's queue when {@code withQueue}. */
    private void connect(TestApp app, String deviceId, boolean withQueue) {
        try {
            leases.renew(Service.CONNECTION_MANAGER, new Replica(node, Instant.now(), "test", Map.of()), Duration.ofMinutes(1)).get();
            redis.set(RedisKeys.mqttSession(app.id(), deviceId), node + "|connection-1").get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        if (withQueue) {
            String name = MqttAddresses.nodeQueue(node);
            Queue queue = new Queue(name, false, false, false);
            admin().declareQueue(queue);
            admin().declareBinding(BindingBuilder.bind(queue).to(new DirectExchange(Queues.EXCHANGE, true, false)).with(name));
        }
    }

    private RabbitAdmin admin() {
        return new RabbitAdmin(rabbit.getConnectionFactory());
    }
}
