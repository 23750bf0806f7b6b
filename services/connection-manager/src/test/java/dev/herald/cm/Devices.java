package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;

import com.hivemq.client.mqtt.MqttClient;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5ClientBuilder;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5Disconnect;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import tools.jackson.databind.JsonNode;

/** Devices on the HiveMQ MQTT client (5 and 3.1.1), collecting what they receive. */
final class Devices {
    private Devices() {
    }

    /** An MQTT 5 device: what it received (as JSON), and the server's DISCONNECT if one came. */
    record V5(Mqtt5AsyncClient client, BlockingQueue<JsonNode> received, CompletableFuture<Mqtt5Disconnect> disconnect) {
        JsonNode next() throws InterruptedException {
            JsonNode message = received.poll(15, TimeUnit.SECONDS);
            if (message == null) {
                throw new AssertionError("no message within 15 s");
            }
            return message;
        }

        void close() {
            if (client.getState().isConnected()) {
                client.disconnect().join();
            }
        }
    }

    static Mqtt5AsyncClient v5Client(Herald.Device device, int port) {
        return MqttClient.builder().useMqttVersion5().identifier(device.deviceId())
                .serverHost("127.0.0.1").serverPort(port).buildAsync();
    }

    /** Connects with the device's credentials and subscribes to its topic (QoS 1). */
    static V5 connectV5(Herald.Device device, int port) {
        return connectV5(device, transport -> transport.serverHost("127.0.0.1").serverPort(port));
    }

    /** As {@link #connectV5(Herald.Device, int)}, over the transport the function sets up (address, TLS, WebSocket). */
    static V5 connectV5(Herald.Device device, UnaryOperator<Mqtt5ClientBuilder> transport) {
        BlockingQueue<JsonNode> received = new LinkedBlockingQueue<>();
        CompletableFuture<Mqtt5Disconnect> disconnect = new CompletableFuture<>();
        Mqtt5AsyncClient client = transport.apply(MqttClient.builder().useMqttVersion5().identifier(device.deviceId()))
                .addDisconnectedListener(context -> {
                    if (context.getCause() instanceof com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException e) {
                        disconnect.complete(e.getMqttMessage());
                    }
                })
                .buildAsync();
        client.connectWith().cleanStart(true).keepAlive(30).simpleAuth().username(device.appId())
                .password(device.password().getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send()
                .orTimeout(10, TimeUnit.SECONDS).join();
        client.subscribeWith().topicFilter(device.topic()).qos(MqttQos.AT_LEAST_ONCE)
                .callback(publish -> received.add(Herald.JSON.readTree(publish.getPayloadAsBytes())))
                .send().orTimeout(10, TimeUnit.SECONDS).join();
        return new V5(client, received, disconnect);
    }

    /** What the connection manager answers an MQTT 5 CONNECT with the device's credentials (the client disconnects after). */
    static Mqtt5ConnAckReasonCode connack(Herald.Device device, int port) {
        Mqtt5AsyncClient client = v5Client(device, port);
        try {
            return client.connectWith().simpleAuth().username(device.appId())
                    .password(device.password().getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send()
                    .orTimeout(10, TimeUnit.SECONDS).join().getReasonCode();
        } catch (CompletionException e) {
            assertThat(e.getCause()).isInstanceOf(Mqtt5ConnAckException.class);
            return ((Mqtt5ConnAckException) e.getCause()).getMqttMessage().getReasonCode();
        } finally {
            if (client.getState().isConnected()) {
                client.disconnect().join();
            }
        }
    }

    static Mqtt3AsyncClient connectV3(Herald.Device device, int port, BlockingQueue<JsonNode> received) {
        Mqtt3AsyncClient client = MqttClient.builder().useMqttVersion3().identifier(device.deviceId())
                .serverHost("127.0.0.1").serverPort(port).buildAsync();
        client.connectWith().cleanSession(true).keepAlive(30).simpleAuth().username(device.appId())
                .password(device.password().getBytes(StandardCharsets.UTF_8)).applySimpleAuth().send()
                .orTimeout(10, TimeUnit.SECONDS).join();
        client.subscribeWith().topicFilter(device.topic()).qos(MqttQos.AT_LEAST_ONCE)
                .callback(publish -> received.add(Herald.JSON.readTree(publish.getPayloadAsBytes())))
                .send().orTimeout(10, TimeUnit.SECONDS).join();
        return client;
    }

    static Duration timeout() {
        return Duration.ofSeconds(15);
    }
}
