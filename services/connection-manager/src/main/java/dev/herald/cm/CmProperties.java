package dev.herald.cm;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.UUID;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Connection-manager settings.
 *
 * @param nodeId      this node's id (in Kubernetes the pod name); default hostname + random suffix.
 *                    Names its queue {@code herald.cm.node.<nodeId>} and its lease in Redis
 * @param mqtt        the MQTT listener
 * @param lease       how long the node's lease lives without a heartbeat: after a crash its devices
 *                    count as offline (their messages wait in their boxes) at most this long
 * @param maxInFlight QoS 1 messages sent to one device and not yet acknowledged (capped by the
 *                    client's Receive Maximum); more wait
 * @param queueExpiry a node queue without consumer for this long is deleted by RabbitMQ (a dead
 *                    node's queue: it held only copies of what the boxes hold)
 * @param expirySweep how often expired messages of devices that stay away are settled {@code expired}
 */
@ConfigurationProperties("herald.cm")
public record CmProperties(
        String nodeId,
        @DefaultValue Mqtt mqtt,
        @DefaultValue("10s") Duration lease,
        @DefaultValue("32") int maxInFlight,
        @DefaultValue("5m") Duration queueExpiry,
        @DefaultValue("5s") Duration expirySweep) {

    /**
     * @param port           MQTT port
     * @param host           address to bind
     * @param maxPacketSize  larger packets close the connection (MQTT 5: DISCONNECT 0x95)
     * @param connectTimeout a connection that sends no CONNECT within this is closed
     * @param maxKeepAlive   keepalive in seconds granted at most (MQTT 5 tells the client through Server Keep Alive)
     * @param workerThreads  Netty event-loop threads; 0 = two per core
     */
    public record Mqtt(
            @DefaultValue("1883") int port,
            @DefaultValue("0.0.0.0") String host,
            @DefaultValue("16384") int maxPacketSize,
            @DefaultValue("10s") Duration connectTimeout,
            @DefaultValue("1200") int maxKeepAlive,
            @DefaultValue("0") int workerThreads) {
    }

    public CmProperties {
        if (nodeId == null || nodeId.isBlank()) {
            nodeId = hostname() + "-" + UUID.randomUUID().toString().substring(0, 8);
        }
        if (!nodeId.matches("[A-Za-z0-9._-]{1,200}")) {
            throw new IllegalArgumentException("herald.cm.node-id must be letters, digits, '.', '_' or '-': " + nodeId);
        }
    }

    private static String hostname() {
        try {
            return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "-");
        } catch (UnknownHostException e) {
            return "cm";
        }
    }
}
