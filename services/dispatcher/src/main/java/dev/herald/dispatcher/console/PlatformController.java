package dev.herald.dispatcher.console;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.contract.Queues;
import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /v1/platform}: the admin's view of the running platform, read from where each part keeps
 * it: RabbitMQ's own count of each work queue's messages and consumers, and the live replicas of the
 * gateway and the connection manager from their leases in Redis ({@link ReplicaLeases}), each with
 * what it said of itself at its last renewal.
 */
@AdminApi
@RestController
public class PlatformController {
    static final List<String> QUEUES = List.of(Queues.SEND_HIGH, Queues.SEND_NORMAL, Queues.AUDIENCE, Queues.PARKED,
            Queues.DEAD);
    static final String CONNECTIONS = "connections";

    /** @param messages ready messages; -1 with consumers -1 when the queue does not exist (yet) */
    public record QueueView(String name, long messages, long consumers) {
    }

    /** @param mqttConnections open MQTT device connections over all connection managers */
    public record PlatformView(List<QueueView> queues, List<Replica> gateways, List<Replica> connectionManagers,
                               long mqttConnections) {
    }

    private final AmqpAdmin rabbit;
    private final ReplicaLeases leases;

    public PlatformController(AmqpAdmin rabbit, ReplicaLeases leases) {
        this.rabbit = rabbit;
        this.leases = leases;
    }

    @GetMapping("/v1/platform")
    PlatformView platform() {
        CompletableFuture<List<Replica>> gateways = leases.live(Service.GATEWAY);
        CompletableFuture<List<Replica>> nodes = leases.live(Service.CONNECTION_MANAGER);
        List<QueueView> queues = QUEUES.stream().map(name -> {
            QueueInformation info = rabbit.getQueueInfo(name);
            return info == null ? new QueueView(name, -1, -1) : new QueueView(name, info.getMessageCount(), info.getConsumerCount());
        }).toList();
        List<Replica> connectionManagers = await(nodes);
        return new PlatformView(queues, await(gateways), connectionManagers,
                connectionManagers.stream().mapToLong(node -> node.figure(CONNECTIONS)).sum());
    }
}
