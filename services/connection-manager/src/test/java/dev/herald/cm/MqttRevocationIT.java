package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.exceptions.Mqtt3ConnAckException;
import com.hivemq.client.mqtt.mqtt3.message.connect.connack.Mqtt3ConnAckReturnCode;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Revoking one device's MQTT credentials (admin API): the device connected now is disconnected as
 * not authorized, its password is refused from then on (MQTT 5 and 3.1.1), the new password its app
 * reads works, and other devices of the app are not touched. A device its app unregisters is revoked the same way.
 */
class MqttRevocationIT {
    private final Herald herald = Herald.get();
    private final Herald.App app = herald.createApp();

    private Herald.Device device() {
        return herald.registerMqtt(app, "dev-" + UUID.randomUUID().toString().substring(0, 8));
    }

    private String push(Herald.Device device) {
        return herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", "hello"));
    }

    @Test
    void aConnectedMqtt5DeviceIsDisconnectedNotAuthorizedAndItsPasswordRefusedThenItsNewOneWorks() throws Exception {
        Herald.Device device = device();
        Herald.Device bystander = device();
        Devices.V5 connected = Devices.connectV5(device, herald.mqttPort());
        Devices.V5 other = Devices.connectV5(bystander, herald.mqttPort());
        herald.revokeMqtt(app, device.deviceId());
        assertThat(connected.disconnect().get(10, TimeUnit.SECONDS).getReasonCode()).isEqualTo(Mqtt5DisconnectReasonCode.NOT_AUTHORIZED);
        assertThat(Devices.connack(device, herald.mqttPort())).isEqualTo(Mqtt5ConnAckReasonCode.NOT_AUTHORIZED);

        Herald.Device renewed = herald.readMqtt(app, device.deviceId());
        assertThat(renewed.password()).isNotEqualTo(device.password());
        // The pushes sent meanwhile waited in the box: the device gets them with its new password.
        String id = push(device);
        Devices.V5 again = Devices.connectV5(renewed, herald.mqttPort());
        assertThat(again.next().get("id").asString()).isEqualTo(id);
        again.close();

        String toOther = push(bystander);
        assertThat(other.next().get("id").asString()).isEqualTo(toOther);
        assertThat(other.disconnect()).isNotDone();
        other.close();
    }

    @Test
    void aConnectedMqtt311DeviceIsClosedAndRefusedWithReturnCode5() {
        Herald.Device device = device();
        Mqtt3AsyncClient connected = Devices.connectV3(device, herald.mqttPort(), new LinkedBlockingQueue<>());
        herald.revokeMqtt(app, device.deviceId());
        await().atMost(Devices.timeout()).until(() -> !connected.getState().isConnected());

        Mqtt3AsyncClient again = MqttClient.builder().useMqttVersion3().identifier(device.deviceId())
                .serverHost("127.0.0.1").serverPort(herald.mqttPort()).buildAsync();
        assertThatThrownBy(() -> again.connectWith().simpleAuth().username(device.appId())
                .password(device.password().getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send().join())
                .cause().isInstanceOfSatisfying(Mqtt3ConnAckException.class,
                        e -> assertThat(e.getMqttMessage().getReturnCode()).isEqualTo(Mqtt3ConnAckReturnCode.NOT_AUTHORIZED));
    }

    @Test
    void revokingTwiceLeavesOnlyTheNewestPasswordAndAWrongPasswordIsStillBadCredentials() {
        Herald.Device device = device();
        herald.revokeMqtt(app, device.deviceId());
        Herald.Device first = herald.readMqtt(app, device.deviceId());
        herald.revokeMqtt(app, device.deviceId());
        Herald.Device second = herald.readMqtt(app, device.deviceId());
        assertThat(Devices.connack(first, herald.mqttPort())).isEqualTo(Mqtt5ConnAckReasonCode.NOT_AUTHORIZED);
        assertThat(Devices.connack(second, herald.mqttPort())).isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);
        Herald.Device forged = new Herald.Device(app.id(), device.deviceId(), "3" + second.password().substring(1), device.topic());
        assertThat(Devices.connack(forged, herald.mqttPort())).isEqualTo(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD);
    }

    @Test
    void aDeviceItsAppUnregistersIsDisconnectedAndItsPasswordRefused() throws Exception {
        Herald.Device device = device();
        Herald.Device bystander = device();
        Devices.V5 connected = Devices.connectV5(device, herald.mqttPort());
        herald.call("DELETE", "/v1/apps/" + app.id() + "/devices/" + device.deviceId(), app.key(), null, 204);
        assertThat(connected.disconnect().get(10, TimeUnit.SECONDS).getReasonCode()).isEqualTo(Mqtt5DisconnectReasonCode.NOT_AUTHORIZED);
        assertThat(Devices.connack(device, herald.mqttPort())).isEqualTo(Mqtt5ConnAckReasonCode.NOT_AUTHORIZED);
        assertThat(Devices.connack(bystander, herald.mqttPort())).isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);

        // Registered again, it is given the password of its new generation, which connects.
        Herald.Device again = herald.registerMqtt(app, device.deviceId());
        assertThat(again.password()).isNotEqualTo(device.password());
        assertThat(Devices.connack(again, herald.mqttPort())).isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);
    }

    @Test
    void onlyTheAdminRevokesAndOnlyInAnAppThatExists() {
        Herald.Device device = device();
        String path = "/v1/apps/" + app.id() + "/devices/" + device.deviceId() + "/mqtt-credentials";
        herald.call("DELETE", path, app.key(), null, 401);
        herald.call("DELETE", "/v1/apps/no-such-app/devices/d1/mqtt-credentials", Herald.ADMIN_TOKEN, null, 404);
        herald.call("DELETE", "/v1/apps/" + app.id() + "/devices/bad%24id/mqtt-credentials", Herald.ADMIN_TOKEN, null, 400);
        assertThat(Devices.connack(device, herald.mqttPort())).isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);
    }
}
