package dev.herald.cm;

import dev.herald.store.replica.Replica;
import java.time.Duration;
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
     * @param port           plain MQTT port (when {@code plain})
     * @param host           address to bind
     * @param maxPacketSize  larger packets close the connection (MQTT 5: DISCONNECT 0x95)
     * @param connectTimeout a connection that sends no CONNECT within this is closed
     * @param maxKeepAlive   keepalive in seconds granted at most (MQTT 5 tells the client through Server Keep Alive)
     * @param workerThreads  Netty event-loop threads; 0 = two per core
     * @param plain          the unencrypted listeners: MQTT on {@code port}, and MQTT over WebSocket (ws) when
     *                       {@code websocket.enabled}; false leaves only the TLS ones (then {@code tls.enabled} is required)
     * @param tls            MQTT over TLS (and WebSocket over TLS)
     * @param websocket      MQTT over WebSocket
     */
    public record Mqtt(
            @DefaultValue("1883") int port,
            @DefaultValue("0.0.0.0") String host,
            @DefaultValue("16384") int maxPacketSize,
            @DefaultValue("10s") Duration connectTimeout,
            @DefaultValue("1200") int maxKeepAlive,
            @DefaultValue("0") int workerThreads,
            @DefaultValue("true") boolean plain,
            @DefaultValue Tls tls,
            @DefaultValue WebSocket websocket) {
        public Mqtt {
            if (!plain && !tls.enabled()) {
                throw new IllegalArgumentException("herald.cm.mqtt.plain=false needs herald.cm.mqtt.tls.enabled=true: no listener is left");
            }
        }
    }

    /**
     * TLS 1.2 and 1.3 only, with AEAD cipher suites and forward secrecy (ECDHE); the files are those of a
     * {@code kubernetes.io/tls} Secret mounted as a directory, as cert-manager writes it.
     *
     * @param enabled        MQTT over TLS on {@code tls.port}, and WebSocket over TLS (wss) when {@code websocket.enabled}
     * @param port           MQTT over TLS port
     * @param certificateDir directory holding {@code tls.crt} (PEM: the certificate, then its chain) and
     *                       {@code tls.key} (PEM: PKCS#8, PKCS#1 or SEC1); a {@code ca.crt} there is not used
     * @param reloadCheck    how often the files are compared with those in use: changed files serve every
     *                       new connection from then on, without a restart (open connections keep theirs)
     */
    public record Tls(
            @DefaultValue("false") boolean enabled,
            @DefaultValue("8883") int port,
            @DefaultValue("/etc/herald/mqtt-tls") String certificateDir,
            @DefaultValue("10s") Duration reloadCheck) {
    }

    /**
     * MQTT over WebSocket (binary frames, subprotocol {@code mqtt}), for devices and browsers that can
     * only reach HTTP(S) ports.
     *
     * @param enabled WebSocket listeners: ws on {@code websocket.port} (if {@code plain}), wss on {@code websocket.tls-port} (if {@code tls.enabled})
     * @param port    MQTT over WebSocket port
     * @param tlsPort MQTT over WebSocket over TLS port
     * @param path    the HTTP path of the WebSocket upgrade
     */
    public record WebSocket(
            @DefaultValue("false") boolean enabled,
            @DefaultValue("8083") int port,
            @DefaultValue("8084") int tlsPort,
            @DefaultValue("/mqtt") String path) {
    }

    public CmProperties {
        if (nodeId == null || nodeId.isBlank()) {
            nodeId = Replica.newId("cm");
        }
        if (!nodeId.matches("[A-Za-z0-9._-]{1,200}")) {
            throw new IllegalArgumentException("herald.cm.node-id must be letters, digits, '.', '_' or '-': " + nodeId);
        }
    }
}
