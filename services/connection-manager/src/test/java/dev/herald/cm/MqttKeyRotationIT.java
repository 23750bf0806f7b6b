package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;

import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import dev.herald.cm.mqtt.MqttServer;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

/**
 * A credential key rotation with real connection managers (README, key rotation): a device registered
 * while key A was current keeps connecting once key B is current and A only a previous key, the
 * password its app reads from then on (B's) connects too, and after the re-encrypt command, with A
 * removed, B's password still connects while A's is refused.
 */
class MqttKeyRotationIT {
    /** Key B, which replaces this platform's key ({@link Herald#CRYPTO_KEY}, key A). */
    private static final String NEW_KEY = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVowMTIzNDU=";

    private final Herald herald = Herald.get();
    private final Herald.App app = herald.createApp();

    private static int mqttPort(ConfigurableApplicationContext cm) {
        return cm.getBean(MqttServer.class).port();
    }

    @Test
    void aDeviceRegisteredUnderThePreviousKeyConnectsDuringTheRotationAndWithTheNewPasswordAfterReencrypt() {
        String deviceId = "rotation-" + UUID.randomUUID().toString().substring(0, 8);
        Herald.Device underA = herald.registerMqtt(app, deviceId);
        String suffix = UUID.randomUUID().toString().substring(0, 6);

        Herald.Device underB;
        try (ConfigurableApplicationContext dispatcher = Herald.startDispatcher(NEW_KEY, List.of(Herald.CRYPTO_KEY));
             ConfigurableApplicationContext cm = Herald.startConnectionManager("cm-rotating-" + suffix, NEW_KEY,
                     List.of(Herald.CRYPTO_KEY))) {
            assertThat(Devices.connack(underA, mqttPort(cm))).as("password issued under A, A previous")
                    .isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);
            JsonNode mqtt = herald.call(dispatcher, "GET", "/v1/apps/" + app.id() + "/devices/" + deviceId, app.key(), null, 200)
                    .get("mqtt");
            underB = new Herald.Device(app.id(), deviceId, mqtt.get("password").asString(), mqtt.get("topic").asString());
            assertThat(underB.password()).as("the password issued under B").isNotEqualTo(underA.password());
            assertThat(Devices.connack(underB, mqttPort(cm))).isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);

            JsonNode reencrypted = herald.call(dispatcher, "POST", "/v1/admin/credentials/re-encrypt", Herald.ADMIN_TOKEN,
                    null, 200);
            assertThat(reencrypted.get("undecryptable").isEmpty()).as(reencrypted.toString()).isTrue();
        }

        // A removed: only B's keys remain.
        try (ConfigurableApplicationContext cm = Herald.startConnectionManager("cm-rotated-" + suffix, NEW_KEY, List.of())) {
            assertThat(Devices.connack(underB, mqttPort(cm))).as("password issued under B, A removed")
                    .isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);
            assertThat(Devices.connack(underA, mqttPort(cm))).as("password issued under A, A removed")
                    .isEqualTo(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD);
        }
    }
}
