package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.cm.mqtt.MqttServer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Mosquitto's command-line clients (Debian mosquitto-clients) against the connection manager. */
class MosquittoClientsIT {
    private final Herald herald = Herald.get();
    private final Herald.App app = herald.createApp();

    private static String executable(String name) {
        return TestTls.executable(name);
    }

    @Test
    void mosquittoSubReceivesAPushAndItsPubackMakesItDelivered() throws Exception {
        Herald.Device device = herald.registerMqtt(app, "dev-" + UUID.randomUUID().toString().substring(0, 8));
        String id = herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", "from mosquitto"));
        Process sub = new ProcessBuilder(executable("mosquitto_sub"), "-V", "mqttv5", "-h", "127.0.0.1",
                "-p", String.valueOf(herald.mqttPort()), "-i", device.deviceId(), "-u", device.appId(), "-P", device.password(),
                "-t", device.topic(), "-q", "1", "-C", "1", "-W", "20").redirectErrorStream(true).start();
        assertThat(sub.waitFor(25, TimeUnit.SECONDS)).isTrue();
        String output = new String(sub.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(sub.exitValue()).as(output).isZero();
        JsonNode received = Herald.JSON.readTree(output);
        assertThat(received.get("id").asString()).isEqualTo(id);
        assertThat(received.get("title").asString()).isEqualTo("from mosquitto");
        await().atMost(Devices.timeout()).until(() -> herald.state(app, id).equals("delivered"));
    }

    @Test
    void mosquittoSubOverTlsReceivesAPush() throws Exception {
        Herald.Device device = herald.registerMqtt(app, "dev-" + UUID.randomUUID().toString().substring(0, 8));
        String id = herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", "over TLS"));
        // --cafile: the server's certificate is checked against the CA, and its name against -h.
        Process sub = new ProcessBuilder(executable("mosquitto_sub"), "-V", "mqttv311", "-h", "127.0.0.1",
                "-p", String.valueOf(herald.port(MqttServer.Listener.MQTT_TLS)), "--cafile", herald.tls().caCertificate.toString(),
                "-i", device.deviceId(), "-u", device.appId(), "-P", device.password(),
                "-t", device.topic(), "-q", "1", "-C", "1", "-W", "20").redirectErrorStream(true).start();
        assertThat(sub.waitFor(25, TimeUnit.SECONDS)).isTrue();
        String output = new String(sub.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(sub.exitValue()).as(output).isZero();
        assertThat(Herald.JSON.readTree(output).get("id").asString()).isEqualTo(id);
        await().atMost(Devices.timeout()).until(() -> herald.state(app, id).equals("delivered"));
    }

    @Test
    void mosquittoPubOverTlsWithARevokedPasswordIsNotAuthorised() throws Exception {
        Herald.Device device = herald.registerMqtt(app, "dev-" + UUID.randomUUID().toString().substring(0, 8));
        herald.revokeMqtt(app, device.deviceId());
        Process pub = new ProcessBuilder(executable("mosquitto_pub"), "-V", "mqttv311", "-h", "127.0.0.1",
                "-p", String.valueOf(herald.port(MqttServer.Listener.MQTT_TLS)), "--cafile", herald.tls().caCertificate.toString(),
                "-i", device.deviceId(), "-u", device.appId(), "-P", device.password(),
                "-t", device.topic(), "-m", "x").redirectErrorStream(true).start();
        assertThat(pub.waitFor(20, TimeUnit.SECONDS)).isTrue();
        String output = new String(pub.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(pub.exitValue()).as(output).isNotZero();
        assertThat(output.toLowerCase()).contains("not authori");
    }

    @Test
    void mosquittoPubWithAWrongPasswordIsRefused() throws Exception {
        Herald.Device device = herald.registerMqtt(app, "dev-" + UUID.randomUUID().toString().substring(0, 8));
        Process pub = new ProcessBuilder(executable("mosquitto_pub"), "-V", "mqttv311", "-h", "127.0.0.1",
                "-p", String.valueOf(herald.mqttPort()), "-i", device.deviceId(), "-u", device.appId(), "-P", "wrong",
                "-t", device.topic(), "-m", "x").redirectErrorStream(true).start();
        assertThat(pub.waitFor(20, TimeUnit.SECONDS)).isTrue();
        String output = new String(pub.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(pub.exitValue()).isNotZero();
        assertThat(output.toLowerCase()).contains("bad user name or password");
    }
}
