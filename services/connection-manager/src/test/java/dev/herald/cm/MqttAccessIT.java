package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.exceptions.Mqtt3ConnAckException;
import com.hivemq.client.mqtt.mqtt3.exceptions.Mqtt3SubAckException;
import com.hivemq.client.mqtt.mqtt3.message.connect.connack.Mqtt3ConnAckReturnCode;
import com.hivemq.client.mqtt.mqtt3.message.subscribe.suback.Mqtt3SubAckReturnCode;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5SubAckException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.subscribe.suback.Mqtt5SubAckReasonCode;
import com.hivemq.client.mqtt.MqttClient;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Access control and bad input: each offence closes only the offending connection with the MQTT
 * reason code for it, while the server and a bystander device connected throughout carry on.
 */
class MqttAccessIT {
    private final Herald herald = Herald.get();
    private final Herald.App app = herald.createApp();
    private Herald.Device bystander;
    private Devices.V5 bystanderClient;

    private static String deviceId() {
        return "dev-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @BeforeEach
    void connectBystander() {
        bystander = herald.registerMqtt(app, deviceId());
        bystanderClient = Devices.connectV5(bystander, herald.mqttPort());
    }

    @AfterEach
    void bystanderStillServed() throws Exception {
        String id = herald.send(app, Map.of("to", Map.of("devices", List.of(bystander.deviceId())), "title", "still here"));
        assertThat(bystanderClient.next().get("id").asString()).isEqualTo(id);
        assertThat(bystanderClient.disconnect()).isNotDone();
        bystanderClient.close();
    }

    @Test
    void wrongCredentialsAreRefusedWithBadUsernameOrPassword() {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        Herald.Device wrong = new Herald.Device(device.appId(), device.deviceId(), device.password() + "x", device.topic());
        Mqtt5AsyncClient v5 = Devices.v5Client(wrong, herald.mqttPort());
        assertThatThrownBy(() -> v5.connectWith().simpleAuth().username(wrong.appId())
                .password(wrong.password().getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send().join())
                .isInstanceOf(CompletionException.class).cause().isInstanceOfSatisfying(Mqtt5ConnAckException.class,
                        e -> assertThat(e.getMqttMessage().getReasonCode()).isEqualTo(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD));
        // Another app's name with this device's password is wrong as well: the password binds both.
        Mqtt3AsyncClient v3 = MqttClient.builder().useMqttVersion3().identifier(device.deviceId())
                .serverHost("127.0.0.1").serverPort(herald.mqttPort()).buildAsync();
        assertThatThrownBy(() -> v3.connectWith().simpleAuth().username("other-app")
                .password(device.password().getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send().join())
                .cause().isInstanceOfSatisfying(Mqtt3ConnAckException.class,
                        e -> assertThat(e.getMqttMessage().getReturnCode()).isEqualTo(Mqtt3ConnAckReturnCode.BAD_USER_NAME_OR_PASSWORD));
    }

    @Test
    void aDeviceCannotSubscribeToAnotherDevicesTopic() {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        Devices.V5 client = Devices.connectV5(device, herald.mqttPort());
        try {
            assertThatThrownBy(() -> client.client().subscribeWith().topicFilter(bystander.topic()).qos(MqttQos.AT_LEAST_ONCE)
                    .callback(publish -> { }).send().join())
                    .cause().isInstanceOfSatisfying(Mqtt5SubAckException.class,
                            e -> assertThat(e.getMqttMessage().getReasonCodes()).containsExactly(Mqtt5SubAckReasonCode.NOT_AUTHORIZED));
        } finally {
            client.close();
        }
        Herald.Device v3Device = herald.registerMqtt(app, deviceId());
        Mqtt3AsyncClient v3 = Devices.connectV3(v3Device, herald.mqttPort(), new LinkedBlockingQueue<>());
        try {
            assertThatThrownBy(() -> v3.subscribeWith().topicFilter("apps/#").qos(MqttQos.AT_LEAST_ONCE)
                    .callback(publish -> { }).send().join())
                    .cause().isInstanceOfSatisfying(Mqtt3SubAckException.class,
                            e -> assertThat(e.getMqttMessage().getReturnCodes()).containsExactly(Mqtt3SubAckReturnCode.FAILURE));
        } finally {
            v3.disconnect().join();
        }
    }

    @Test
    void publishingToAnotherDevicesTopicClosesTheConnectionAsNotAuthorized() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        Devices.V5 client = Devices.connectV5(device, herald.mqttPort());
        client.client().publishWith().topic(bystander.topic()).qos(MqttQos.AT_LEAST_ONCE)
                .payload("{\"id\":\"forged\"}".getBytes(StandardCharsets.UTF_8)).send();
        assertThat(client.disconnect().get(15, TimeUnit.SECONDS).getReasonCode()).isEqualTo(Mqtt5DisconnectReasonCode.NOT_AUTHORIZED);
        assertThat(bystanderClient.received()).isEmpty();
    }

    @Test
    void aMalformedPacketClosesThatConnectionWithMalformedPacket() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        try (RawMqtt raw = new RawMqtt(herald.mqttPort())) {
            assertThat(raw.connect(device)).isZero();
            raw.send(0x36, new byte[] {0, 1, 'x', 0, 1}); // PUBLISH with QoS 3, which does not exist
            int[] disconnect = raw.readPacket();
            assertThat(disconnect[0]).isEqualTo(0xE0);
            assertThat(disconnect[2]).isEqualTo(0x81);
            assertThat(raw.closedByServer()).isTrue();
        }
    }

    @Test
    void anOversizedPacketClosesThatConnectionWithPacketTooLarge() throws Exception {
        Herald.Device device = herald.registerMqtt(app, deviceId());
        try (RawMqtt raw = new RawMqtt(herald.mqttPort())) {
            assertThat(raw.connect(device)).isZero();
            byte[] topic = device.topic().getBytes(StandardCharsets.UTF_8);
            byte[] body = new byte[64 * 1024];
            body[0] = (byte) (topic.length >> 8);
            body[1] = (byte) topic.length;
            System.arraycopy(topic, 0, body, 2, topic.length);
            raw.send(0x30, body);
            int[] disconnect = raw.readPacket();
            assertThat(disconnect[0]).isEqualTo(0xE0);
            assertThat(disconnect[2]).isEqualTo(0x95);
            assertThat(raw.closedByServer()).isTrue();
        }
    }
}
