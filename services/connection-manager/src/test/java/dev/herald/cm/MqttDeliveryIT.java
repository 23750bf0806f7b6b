package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import dev.herald.testsupport.MetricsScrape;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Pushes through the whole platform (dispatcher API, RabbitMQ, gateway, connection manager) to
 * devices on a real MQTT client: QoS 1 receipts make the status {@code delivered}; the per-device
 * box keeps what an offline device misses, in order, honouring TTL and collapse keys; a second
 * connection with the same client id takes over without losing anything.
 */
class MqttDeliveryIT {
    private final Herald herald = Herald.get();
    private final Herald.App app = herald.createApp();

    @AfterAll
    static void everyKeyTheServicesWroteIsOneTheStoreDefines() {
        assertThat(Herald.get().keysOfUndefinedShape()).isEmpty();
    }

    private static String deviceId() {
        return "dev-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private String send(Herald.Device device, String title) {
        return herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", title, "data", Map.of("k", "v")));
    }

    @Test
    void aConnectedDeviceReceivesThePushAndItsPubackMakesTheStatusDelivered() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        Devices.V5 client = Devices.connectV5(device, herald.mqttPort());
        try {
            String id = send(device, "hello");
            JsonNode received = client.next();
            assertThat(received.get("id").asString()).isEqualTo(id);
            assertThat(received.get("title").asString()).isEqualTo("hello");
            assertThat(received.get("data").get("k").asString()).isEqualTo("v");
            assertThat(received.get("acceptedAt").asLong()).isPositive();
            await().atMost(Devices.timeout()).until(() -> herald.state(app, id).equals("delivered"));
            JsonNode targets = herald.status(app, id).get("targets");
            assertThat(targets.get("delivered").asInt()).isEqualTo(1);
            assertThat(targets.get("pending").asInt()).isZero();
            String metrics = herald.metrics();
            assertThat(metrics).contains("herald_cm_delivered_total").contains("herald_cm_connections");
            MetricsScrape.write("connection-manager", metrics); // for the charts' dashboard/alert metric-name check
        } finally {
            client.close();
        }
    }

    @Test
    void anMqtt311DeviceReceivesToo() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        BlockingQueue<JsonNode> received = new LinkedBlockingQueue<>();
        Mqtt3AsyncClient client = Devices.connectV3(device, herald.mqttPort(), received);
        try {
            String id = send(device, "v3");
            JsonNode message = received.poll(15, TimeUnit.SECONDS);
            assertThat(message).isNotNull();
            assertThat(message.get("id").asString()).isEqualTo(id);
            await().atMost(Devices.timeout()).until(() -> herald.state(app, id).equals("delivered"));
        } finally {
            client.disconnect().join();
        }
    }

    @Test
    void messagesForAnOfflineDeviceWaitAndAreDrainedInOrderOnConnect() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        List<String> ids = List.of(send(device, "one"), send(device, "two"), send(device, "three"));
        // In the box, not delivered: the device is offline.
        await().atMost(Devices.timeout()).until(() -> herald.boxSize(device) == 3);
        for (String id : ids) {
            assertThat(herald.state(app, id)).isNotEqualTo("delivered");
        }
        Devices.V5 client = Devices.connectV5(device, herald.mqttPort());
        try {
            assertThat(List.of(client.next().get("id").asString(), client.next().get("id").asString(),
                    client.next().get("id").asString())).containsExactlyElementsOf(ids);
            for (String id : ids) {
                await().atMost(Devices.timeout()).until(() -> herald.state(app, id).equals("delivered"));
            }
        } finally {
            client.close();
        }
    }

    @Test
    void aMessageCancelledWhileTheDeviceWasOfflineIsDroppedFromItsBoxAndEndsCancelled() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        String cancelled = send(device, "never mind");
        String kept = send(device, "still on");
        await().atMost(Devices.timeout()).until(() -> herald.boxSize(device) == 2);
        assertThat(herald.call("DELETE", "/v1/apps/" + app.id() + "/messages/" + cancelled, app.key(), null, 202)
                .get("state").asString()).isEqualTo("cancelling");

        Devices.V5 client = Devices.connectV5(device, herald.mqttPort());
        try {
            // The drain goes in order: had the cancelled one been sent, it would come first.
            assertThat(client.next().get("id").asString()).isEqualTo(kept);
            await().atMost(Devices.timeout()).until(() -> herald.state(app, cancelled).equals("cancelled"));
            await().atMost(Devices.timeout()).until(() -> herald.state(app, kept).equals("delivered"));
            assertThat(herald.status(app, cancelled).get("targets").get("cancelled").asInt()).isEqualTo(1);
            assertThat(herald.boxSize(device)).isZero();
        } finally {
            client.close();
        }
    }

    @Test
    void aMessageWhoseTtlPassedWhileTheDeviceWasOfflineIsExpiredNotDelivered() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        String shortLived = herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", "soon gone", "ttl", 1));
        long expiresAt = java.time.Instant.parse(herald.status(app, shortLived).get("acceptedAt").asString()).toEpochMilli() + 1000;
        String lasting = send(device, "still valid");
        await().atMost(Devices.timeout()).until(() -> herald.boxSize(device) == 2);
        await().atMost(Devices.timeout()).until(() -> System.currentTimeMillis() > expiresAt);
        Devices.V5 client = Devices.connectV5(device, herald.mqttPort());
        try {
            // The drain goes in order: had the expired one been sent, it would come first.
            assertThat(client.next().get("id").asString()).isEqualTo(lasting);
            await().atMost(Devices.timeout()).until(() -> herald.state(app, shortLived).equals("expired"));
            await().atMost(Devices.timeout()).until(() -> herald.state(app, lasting).equals("delivered"));
            assertThat(client.received()).isEmpty();
        } finally {
            client.close();
        }
    }

    @Test
    void aMessageToADeviceThatNeverConnectsExpiresByItsTtl() {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        String id = herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", "nobody home", "ttl", 1));
        await().atMost(Devices.timeout()).until(() -> herald.state(app, id).equals("expired"));
        assertThat(herald.boxSize(device)).isZero();
    }

    @Test
    void aNewerMessageWithTheSameCollapseKeyReplacesTheOlderOneWaitingInTheBox() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        String older = herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", "score 1-0", "collapseKey", "score"));
        await().atMost(Devices.timeout()).until(() -> herald.boxSize(device) == 1);
        String newer = herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", "score 2-0", "collapseKey", "score"));
        await().atMost(Devices.timeout()).until(() -> herald.state(app, older).equals("failed"));
        assertThat(herald.status(app, older).get("failures").get("COLLAPSED").asInt()).isEqualTo(1);
        String after = send(device, "other");
        Devices.V5 client = Devices.connectV5(device, herald.mqttPort());
        try {
            assertThat(client.next().get("id").asString()).isEqualTo(newer);
            assertThat(client.next().get("id").asString()).isEqualTo(after);
            await().atMost(Devices.timeout()).until(() -> herald.state(app, newer).equals("delivered"));
        } finally {
            client.close();
        }
    }

    @Test
    void aSecondConnectionWithTheSameClientIdTakesOverAndLosesNothing() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        Devices.V5 first = Devices.connectV5(device, herald.mqttPort());
        Devices.V5 second = Devices.connectV5(device, herald.mqttPort());
        try {
            assertThat(first.disconnect().get(15, TimeUnit.SECONDS).getReasonCode()).isEqualTo(Mqtt5DisconnectReasonCode.SESSION_TAKEN_OVER);
            String id = send(device, "after takeover");
            assertThat(second.next().get("id").asString()).isEqualTo(id);
            await().atMost(Devices.timeout()).until(() -> herald.state(app, id).equals("delivered"));
            assertThat(first.received()).isEmpty();
        } finally {
            second.close();
        }
    }
}
