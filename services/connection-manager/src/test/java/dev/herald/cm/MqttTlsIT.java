package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.cm.mqtt.MqttServer.Listener;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The TLS and WebSocket listeners beside plain MQTT: a device receives its push over each, TLS
 * below 1.2 and weak cipher suites are refused (tried with openssl s_client, which can still offer
 * them), and a renewed certificate serves new connections without a restart.
 */
class MqttTlsIT {
    private final Herald herald = Herald.get();
    private final Herald.App app = herald.createApp();

    private Herald.Device device() {
        return herald.registerMqtt(app, "dev-" + UUID.randomUUID().toString().substring(0, 8));
    }

    private String push(Herald.Device device, String title) {
        return herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", title));
    }

    private void receivesAPushOver(Devices.V5 client, Herald.Device device) throws InterruptedException {
        try {
            String id = push(device, "over " + client.client().getConfig().getTransportConfig());
            assertThat(client.next().get("id").asString()).isEqualTo(id);
            await().atMost(Devices.timeout()).until(() -> herald.state(app, id).equals("delivered"));
        } finally {
            client.close();
        }
    }

    @Test
    void aDeviceReceivesAPushOverTls() throws Exception {
        Herald.Device device = device();
        receivesAPushOver(Devices.connectV5(device, transport -> transport.serverHost("127.0.0.1")
                .serverPort(herald.port(Listener.MQTT_TLS))
                .sslConfig().trustManagerFactory(herald.tls().trustManagers()).applySslConfig()), device);
    }

    @Test
    void aWebSocketClientReceivesAPushOverWss() throws Exception {
        Herald.Device device = device();
        receivesAPushOver(Devices.connectV5(device, transport -> transport.serverHost("127.0.0.1")
                .serverPort(herald.port(Listener.WEBSOCKET_TLS))
                .sslConfig().trustManagerFactory(herald.tls().trustManagers()).applySslConfig()
                .webSocketConfig().serverPath("mqtt").applyWebSocketConfig()), device);
    }

    @Test
    void aWebSocketClientReceivesAPushOverPlainWs() throws Exception {
        Herald.Device device = device();
        receivesAPushOver(Devices.connectV5(device, transport -> transport.serverHost("127.0.0.1")
                .serverPort(herald.port(Listener.WEBSOCKET))
                .webSocketConfig().serverPath("mqtt").applyWebSocketConfig()), device);
    }

    @Test
    void anHttpRequestThatIsNoWebSocketUpgradeGets404() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + herald.port(Listener.WEBSOCKET) + "/mqtt")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isIn(400, 404);
    }

    private TestTls.Run handshake(String... options) {
        List<String> command = new java.util.ArrayList<>(List.of(TestTls.executable("openssl"), "s_client",
                "-connect", "127.0.0.1:" + herald.port(Listener.MQTT_TLS), "-CAfile", herald.tls().caCertificate.toString(),
                "-verify_return_error", "-brief"));
        command.addAll(List.of(options));
        return TestTls.run(herald.tls().work, command);
    }

    @Test
    void onlyTls12And13WithModernCipherSuitesAreAccepted() {
        // The same client, the same certificate checks: only the protocol or the suite differs.
        TestTls.Run tls13 = handshake("-tls1_3");
        assertThat(tls13.output()).as(tls13.output()).contains("Protocol version: TLSv1.3");
        TestTls.Run tls12 = handshake("-tls1_2");
        assertThat(tls12.output()).as(tls12.output()).contains("Protocol version: TLSv1.2").contains("ECDHE");
        // openssl at security level 0 still offers TLS 1.1 and 1.0: the server must refuse them.
        TestTls.Run tls11 = handshake("-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0");
        assertThat(tls11.exit()).as(tls11.output()).isNotZero();
        assertThat(tls11.output()).doesNotContain("Protocol version: TLSv1.1");
        TestTls.Run tls10 = handshake("-tls1", "-cipher", "DEFAULT:@SECLEVEL=0");
        assertThat(tls10.exit()).as(tls10.output()).isNotZero();
        // TLS 1.2 with a suite without forward secrecy or AEAD (RSA key exchange, CBC).
        TestTls.Run weak = handshake("-tls1_2", "-cipher", "AES128-SHA:AES256-SHA256:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA");
        assertThat(weak.exit()).as(weak.output()).isNotZero();
    }

    @Test
    void aRenewedCertificateServesNewConnectionsWithoutARestart() throws Exception {
        Herald.Device device = device();
        Devices.V5 before = Devices.connectV5(device, transport -> transport.serverHost("127.0.0.1")
                .serverPort(herald.port(Listener.MQTT_TLS))
                .sslConfig().trustManagerFactory(herald.tls().trustManagers()).applySslConfig());
        int port = herald.port(Listener.MQTT_TLS);
        String served = herald.tls().servedSubject(port);
        String renewed = herald.tls().renew();
        assertThat(served).doesNotContain(renewed);
        // cert-manager's default key encoding, which the JDK alone cannot read.
        assertThat(herald.tls().keyPem()).contains("BEGIN RSA PRIVATE KEY");
        await().atMost(Devices.timeout()).until(() -> herald.tls().servedSubject(port).equals("CN=" + renewed));
        // The connection made before the renewal carries on, and so do the other listeners.
        receivesAPushOver(before, device);
        assertThat(herald.tls().servedSubject(herald.port(Listener.WEBSOCKET_TLS))).isEqualTo("CN=" + renewed);
    }
}
