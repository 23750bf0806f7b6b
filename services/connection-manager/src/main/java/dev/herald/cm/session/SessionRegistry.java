package dev.herald.cm.session;

import dev.herald.contract.MqttRevocation;
import dev.herald.contract.Queues;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.store.mqtt.DeviceSessions;
import dev.herald.store.mqtt.MqttAddresses;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which device is connected where. Locally a map of this node's sessions; in Redis (the store's
 * {@link DeviceSessions}) the node and connection holding each device, and ({@link ReplicaLeases})
 * this node's lease (renewed by {@link #heartbeat}), so the gateway routes to the node holding a device and treats the
 * devices of a node whose lease lapsed as offline.
 */
public final class SessionRegistry {
    private static final Logger log = LoggerFactory.getLogger(SessionRegistry.class);

    /** What a session needs from the registry. */
    public interface Session {
        String appId();

        String deviceId();

        String connectionId();

        /** Another connection with the same client id took over: close this one. */
        void takenOver();

        /** The device's credentials were revoked: close this connection, not authorized. */
        void revoked();

        /** The node stops: close this connection telling the device to go elsewhere. */
        void serverShuttingDown();

        /** Reads the box again and sends what this session has not sent (copies may have been lost). */
        void redrain();

        /** A copy of a message for this device arrived on the node's queue. */
        void offer(MqttOutbox.Entry entry);
    }

    private final Map<String, Session> local = new ConcurrentHashMap<>();
    private final AtomicLong connections = new AtomicLong();
    private final DeviceSessions sessions;
    private final ReplicaLeases leases;
    private final ConfirmedPublisher publisher;
    private final String nodeId;
    private final Duration lease;
    private final Instant startedAt = Instant.now();

    public SessionRegistry(DeviceSessions sessions, ReplicaLeases leases, ConfirmedPublisher publisher, String nodeId,
                           Duration lease) {
        this.sessions = sessions;
        this.leases = leases;
        this.publisher = publisher;
        this.nodeId = nodeId;
        this.lease = lease;
    }

    private static String key(String appId, String deviceId) {
        return appId + "/" + deviceId;
    }

    public String nodeId() {
        return nodeId;
    }

    /** A fresh id for a connection of this node. */
    public String newConnectionId() {
        return Long.toString(connections.incrementAndGet(), 36);
    }

    /**
     * Makes this connection the device's session, if {@code generation} (that of the password the
     * device presented) has not been revoked: in Redis first (the node that held it before, if
     * another live one, is told to close its connection), then locally (an older local connection
     * is closed). Completes with false, touching no session, when the password was revoked. The
     * local step runs as Redis answers, in the order of the claims, so the connection Redis names
     * last is also the one held here.
     */
    public CompletableFuture<Boolean> claim(Session session, long generation) {
        return sessions.claim(session.appId(), session.deviceId(), holder(session), generation)
                .thenCompose(claim -> {
                    if (!claim.granted()) {
                        return CompletableFuture.completedFuture(false);
                    }
                    Session previous = local.put(key(session.appId(), session.deviceId()), session);
                    if (previous != null && previous != session) {
                        previous.takenOver();
                    }
                    if (claim.replaced().isEmpty() || claim.replaced().get().nodeId().equals(nodeId)) {
                        return CompletableFuture.completedFuture(true);
                    }
                    DeviceSessions.Holder old = claim.replaced().get();
                    Takeover takeover = new Takeover(session.appId(), session.deviceId(), old.connectionId());
                    // A node that is gone has no queue: unroutable, nothing to close there.
                    return publisher.publish(new ConfirmedPublisher.Outgoing(Queues.EXCHANGE, MqttAddresses.nodeQueue(old.nodeId()),
                                    "takeover-" + session.connectionId(), takeover, Map.of(Takeover.HEADER, "1")))
                            .handle((ignored, error) -> {
                                if (error != null) {
                                    log.debug("takeover notice to {} not delivered: {}", old.nodeId(), error.toString());
                                }
                                return true;
                            });
                });
    }

    /** The connection closed: forget it, here and in Redis, unless a newer one replaced it. */
    public CompletableFuture<Void> release(Session session) {
        local.remove(key(session.appId(), session.deviceId()), session);
        return sessions.release(session.appId(), session.deviceId(), holder(session));
    }

    private DeviceSessions.Holder holder(Session session) {
        return new DeviceSessions.Holder(nodeId, session.connectionId());
    }

    public Optional<Session> find(String appId, String deviceId) {
        return Optional.ofNullable(local.get(key(appId, deviceId)));
    }

    /** A takeover notice from another node: closes the named connection if it is still here. */
    public void takeover(Takeover notice) {
        Session session = local.get(key(notice.appId(), notice.deviceId()));
        if (session != null && session.connectionId().equals(notice.connectionId())) {
            local.remove(key(notice.appId(), notice.deviceId()), session);
            session.takenOver();
        }
    }

    /** A revocation from the dispatcher: closes the named connection if it is still here. */
    public void revoked(MqttRevocation notice) {
        Session session = local.get(key(notice.appId(), notice.deviceId()));
        if (session != null && session.connectionId().equals(notice.connectionId())) {
            local.remove(key(notice.appId(), notice.deviceId()), session);
            session.revoked();
        }
    }

    public int size() {
        return local.size();
    }

    public Collection<Session> sessions() {
        return local.values();
    }

    /**
     * Renews this node's lease (a replica lease, with its open connections); the gateway routes to
     * it only while the lease exists.
     */
    public CompletableFuture<Void> heartbeat() {
        return leases.renew(Service.CONNECTION_MANAGER, Replica.of(nodeId, startedAt, Map.of("connections", (long) local.size())), lease);
    }

    /** The node stops: the gateway stops routing here at once rather than when the lease lapses. */
    public CompletableFuture<Void> dropLease() {
        return leases.drop(Service.CONNECTION_MANAGER, nodeId);
    }
}
