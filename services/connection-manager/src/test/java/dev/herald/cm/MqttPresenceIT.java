package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * What the API says of a running MQTT platform: a device's last CONNECT and whether it is connected
 * now (the device API), and the live replicas with their connections (the admin's platform view),
 * with a real client connecting to the connection manager.
 */
class MqttPresenceIT {
    private final Herald herald = Herald.get();
    private final Herald.App app = herald.createApp();

    private JsonNode mqttOf(String deviceId) {
        return herald.call("GET", "/v1/apps/" + app.id() + "/devices/" + deviceId, app.key(), null, 200).get("mqtt");
    }

    @Test
    void theDeviceApiReportsTheLastConnectAndWhetherTheDeviceIsConnectedNow() {
        String deviceId = "presence-" + UUID.randomUUID().toString().substring(0, 8);
        Herald.Device device = herald.registerMqtt(app, deviceId);
        assertThat(mqttOf(deviceId).has("lastConnectAt")).as("never connected").isFalse();
        assertThat(mqttOf(deviceId).get("connected").asBoolean()).isFalse();

        Instant before = Instant.now();
        Devices.V5 client = Devices.connectV5(device, herald.mqttPort());
        JsonNode online = mqttOf(deviceId);
        assertThat(Instant.parse(online.get("lastConnectAt").asString())).isBetween(before, Instant.now());
        assertThat(online.get("connected").asBoolean()).isTrue();

        JsonNode platform = herald.call("GET", "/v1/platform", Herald.ADMIN_TOKEN, null, 200);
        assertThat(platform.get("gateways").size()).isPositive();
        assertThat(platform.get("connectionManagers").size()).isPositive();
        // The node counts its connections at its next lease renewal (every third of herald.cm.lease).
        await().atMost(Devices.timeout()).until(() ->
                herald.call("GET", "/v1/platform", Herald.ADMIN_TOKEN, null, 200).get("mqttConnections").asLong() > 0);

        client.close();
        // The session is released when the server sees the connection close: polled, with a deadline.
        await().atMost(Devices.timeout()).until(() -> !mqttOf(deviceId).get("connected").asBoolean());
        assertThat(mqttOf(deviceId).get("lastConnectAt").asString()).isEqualTo(online.get("lastConnectAt").asString());
    }
}
