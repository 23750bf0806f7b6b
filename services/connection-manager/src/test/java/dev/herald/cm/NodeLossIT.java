package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.replica.Service;
import dev.herald.testsupport.FreePorts;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import dev.herald.testsupport.ServerProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Connection-manager nodes as real processes: one is killed with SIGKILL (or stopped with SIGTERM)
 * while it holds devices and messages keep coming. The devices reconnect to another node and every
 * accepted message reaches its device (counted by message id) and ends {@code delivered}.
 */
class NodeLossIT {
    private static final int DEVICES = 10;
    private static final int MESSAGES_PER_PHASE = 3;

    private final Herald herald = Herald.get();
    private final Herald.App app = herald.createApp();
    private final List<ServerProcess> nodes = new ArrayList<>();

    private record Node(String nodeId, ServerProcess process, int mqttPort) {
    }

    @AfterEach
    void stopNodes() {
        nodes.forEach(ServerProcess::close);
    }

    private Node startNode(String name) throws IOException {
        int mqttPort = FreePorts.next();
        int httpPort = FreePorts.next();
        Path workDir = Files.createDirectories(Path.of("target", "node-loss-it", name + "-" + System.currentTimeMillis()));
        String java = ProcessHandle.current().info().command().orElseThrow();
        Path jar = Path.of(System.getProperty("herald.cm.exec-jar", "target/connection-manager-0.1.0-SNAPSHOT-exec.jar"));
        List<String> command = List.of(java, "-Xmx256m", "-jar", jar.toAbsolutePath().toString(),
                "--server.port=" + httpPort,
                "--spring.rabbitmq.host=" + LocalRabbit.get().host(),
                "--spring.rabbitmq.port=" + LocalRabbit.get().port(),
                "--herald.redis-uri=" + LocalRedis.get().uri(),
                "--herald.cm.node-id=" + name,
                "--herald.cm.lease=2s",
                "--herald.cm.mqtt.host=127.0.0.1",
                "--herald.cm.mqtt.port=" + mqttPort);
        // The crypto key through the environment, as in production (never on a command line).
        ServerProcess process = ServerProcess.start(name, command, Map.of("HERALD_CRYPTO_KEY", Herald.CRYPTO_KEY), workDir);
        nodes.add(process);
        HttpClient http = HttpClient.newHttpClient();
        process.awaitReady(() -> {
            try {
                return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/actuator/health/readiness")).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }, Duration.ofSeconds(120));
        return new Node(name, process, mqttPort);
    }

    private JsonNode mqttOf(Herald.Device device) {
        return herald.call("GET", "/v1/apps/" + app.id() + "/devices/" + device.deviceId(), app.key(), null, 200).get("mqtt");
    }

    private List<Herald.Device> registerDevices() {
        List<Herald.Device> devices = new ArrayList<>();
        for (int i = 0; i < DEVICES; i++) {
            devices.add(herald.registerMqtt(app, "node-loss-" + UUID.randomUUID().toString().substring(0, 8)));
        }
        return devices;
    }

    /** Sends one message to each device; returns the ids per device. */
    private void sendRound(List<Herald.Device> devices, Map<String, List<String>> accepted, String phase) {
        for (Herald.Device device : devices) {
            String id = herald.send(app, Map.of("to", Map.of("devices", List.of(device.deviceId())), "title", phase));
            accepted.computeIfAbsent(device.deviceId(), d -> new ArrayList<>()).add(id);
        }
    }

    private List<Devices.V5> connectAll(List<Herald.Device> devices, int port) {
        return devices.stream().map(device -> Devices.connectV5(device, port)).toList();
    }

    /** Every accepted id reached its device (duplicates allowed, counted) and every message is delivered. */
    private void awaitEverythingDelivered(List<Herald.Device> devices, Map<String, Set<String>> received,
                                          List<Devices.V5> clients, Map<String, List<String>> accepted) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            for (int i = 0; i < devices.size(); i++) {
                Set<String> got = received.computeIfAbsent(devices.get(i).deviceId(), d -> new HashSet<>());
                clients.get(i).received().forEach(json -> got.add(json.get("id").asString()));
                clients.get(i).received().clear();
            }
            return devices.stream().allMatch(d -> received.get(d.deviceId()).containsAll(accepted.get(d.deviceId())));
        });
        for (List<String> ids : accepted.values()) {
            for (String id : ids) {
                await().atMost(Duration.ofSeconds(30)).until(() -> herald.state(app, id).equals("delivered"));
                JsonNode targets = herald.status(app, id).get("targets");
                assertThat(targets.get("delivered").asInt()).as("delivered counted once").isEqualTo(1);
            }
        }
        for (Herald.Device device : devices) {
            assertThat(received.get(device.deviceId())).as("nothing foreign received").containsExactlyInAnyOrderElementsOf(
                    new HashSet<>(accepted.get(device.deviceId())));
        }
    }

    private void drainInto(List<Herald.Device> devices, List<Devices.V5> clients, Map<String, Set<String>> received) {
        for (int i = 0; i < devices.size(); i++) {
            Set<String> got = received.computeIfAbsent(devices.get(i).deviceId(), d -> new HashSet<>());
            clients.get(i).received().forEach(json -> got.add(json.get("id").asString()));
            clients.get(i).received().clear();
        }
    }

    @Test
    void devicesOfANodeKilledWithSigkillReconnectElsewhereAndEveryMessageIsDeliveredOnce() throws Exception {
        Node doomed = startNode("cm-doomed-" + UUID.randomUUID().toString().substring(0, 4));
        Node survivor = startNode("cm-survivor-" + UUID.randomUUID().toString().substring(0, 4));
        List<Herald.Device> devices = registerDevices();
        Map<String, List<String>> accepted = new HashMap<>();
        Map<String, Set<String>> received = new HashMap<>();

        List<Devices.V5> onDoomed = connectAll(devices, doomed.mqttPort());
        sendRound(devices, accepted, "before");
        await().atMost(Duration.ofSeconds(30)).until(() -> onDoomed.stream().allMatch(c -> !c.received().isEmpty()));
        drainInto(devices, onDoomed, received);
        // Messages on their way while the node dies, then while its devices are away.
        for (int i = 0; i < MESSAGES_PER_PHASE; i++) {
            sendRound(devices, accepted, "during");
        }
        String lease = RedisKeys.replicaLease(Service.CONNECTION_MANAGER.id(), doomed.nodeId());
        assertThat(herald.pttl(lease)).as("the node's lease, renewed while it lives").isBetween(1L, 2_000L);
        assertThat(devices).allSatisfy(device -> assertThat(mqttOf(device).get("connected").asBoolean()).isTrue());
        doomed.process().kill();
        assertThat(doomed.process().isAlive()).isFalse();
        for (int i = 0; i < MESSAGES_PER_PHASE; i++) {
            sendRound(devices, accepted, "while away");
        }
        drainInto(devices, onDoomed, received);
        // Killed without cleanup: nothing renews its lease, which Redis expires (herald.cm.lease), and
        // with it the node's devices read as not connected. Their last CONNECT and credential
        // generation are records that outlive any node (libs/store/README.md): they do not expire.
        await().atMost(Duration.ofSeconds(10)).until(() -> herald.pttl(lease) == -2);
        for (Herald.Device device : devices) {
            JsonNode mqtt = mqttOf(device);
            assertThat(mqtt.get("connected").asBoolean()).as("connected to a killed node").isFalse();
            assertThat(mqtt.has("lastConnectAt")).isTrue();
            assertThat(herald.pttl(RedisKeys.mqttConnected(app.id(), device.deviceId()))).isEqualTo(-1);
        }

        List<Devices.V5> onSurvivor = connectAll(devices, survivor.mqttPort());
        sendRound(devices, accepted, "after");
        awaitEverythingDelivered(devices, received, onSurvivor, accepted);
        onSurvivor.forEach(Devices.V5::close);
        System.out.printf("NodeLossIT SIGKILL: %d devices, %d messages accepted, all delivered%n",
                devices.size(), accepted.values().stream().mapToInt(List::size).sum());
    }

    @Test
    void aNodeStoppedGracefullyTellsItsDevicesToMoveAndTheyLoseNothing() throws Exception {
        Node leaving = startNode("cm-leaving-" + UUID.randomUUID().toString().substring(0, 4));
        List<Herald.Device> devices = registerDevices();
        Map<String, List<String>> accepted = new HashMap<>();
        Map<String, Set<String>> received = new HashMap<>();

        List<Devices.V5> onLeaving = connectAll(devices, leaving.mqttPort());
        for (int i = 0; i < MESSAGES_PER_PHASE; i++) {
            sendRound(devices, accepted, "before stop");
        }
        leaving.process().close(); // SIGTERM
        for (Devices.V5 client : onLeaving) {
            assertThat(client.disconnect().get(30, TimeUnit.SECONDS).getReasonCode())
                    .isEqualTo(Mqtt5DisconnectReasonCode.SERVER_SHUTTING_DOWN);
        }
        drainInto(devices, onLeaving, received);
        sendRound(devices, accepted, "while away");
        List<Devices.V5> moved = connectAll(devices, herald.mqttPort());
        sendRound(devices, accepted, "after");
        awaitEverythingDelivered(devices, received, moved, accepted);
        moved.forEach(Devices.V5::close);
    }
}
