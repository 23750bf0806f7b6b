package dev.herald.dispatcher.console;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.contract.Queues;
import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.store.mqtt.DeviceSessions;
import java.util.List;
import java.util.Map;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.QueueInformation;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /v1/platform}: the admin's view of the running platform, read from where each part keeps
 * it: RabbitMQ's own count of each work queue's messages and consumers (every gateway replica consumes
 * {@link Queues#SEND_HIGH}), and the connection managers' leases with their open device connections.
 */
@AdminApi
@RestController
public class PlatformController {
    static final List<String> QUEUES = List.of(Queues.SEND_HIGH, Queues.SEND_NORMAL, Queues.AUDIENCE, Queues.PARKED,
            Queues.DEAD);

    /** @param messages ready messages; -1 with consumers -1 when the queue does not exist (yet) */
    public record QueueView(String name, long messages, long consumers) {
    }

    public record MqttNode(String node, int connections) {
    }

    /**
     * @param gatewayConsumers consumers on the high-priority send queue: the gateway replicas times
     *                         each one's {@code herald.gateway.consumers.high}
     */
    public record PlatformView(List<QueueView> queues, long gatewayConsumers, List<MqttNode> mqttNodes,
                               long mqttConnections) {
    }

    private final AmqpAdmin rabbit;
    private final DeviceSessions sessions;

    public PlatformController(AmqpAdmin rabbit, DeviceSessions sessions) {
        this.rabbit = rabbit;
        this.sessions = sessions;
    }

    @GetMapping("/v1/platform")
    PlatformView platform() {
        List<QueueView> queues = QUEUES.stream().map(name -> {
            QueueInformation info = rabbit.getQueueInfo(name);
            return info == null ? new QueueView(name, -1, -1) : new QueueView(name, info.getMessageCount(), info.getConsumerCount());
        }).toList();
        Map<String, Integer> nodes = await(sessions.nodes());
        List<MqttNode> mqtt = nodes.entrySet().stream().map(node -> new MqttNode(node.getKey(), node.getValue())).toList();
        return new PlatformView(queues, queues.getFirst().consumers(), mqtt,
                mqtt.stream().mapToLong(MqttNode::connections).sum());
    }
}
