package dev.herald.cm;

import dev.herald.cm.delivery.ExpirySweeper;
import dev.herald.cm.delivery.NodeQueueListener;
import dev.herald.cm.mqtt.MqttServer;
import dev.herald.cm.session.SessionRegistry;
import dev.herald.contract.Queues;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.QueueDeclarations;
import dev.herald.store.mqtt.DeviceSessions;
import dev.herald.store.mqtt.MqttAddresses;
import dev.herald.store.mqtt.MqttCredentials;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.replica.ReplicaLeases;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionListener;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import tools.jackson.databind.json.JsonMapper;

/** Wires the node: its queue and lease, the session registry and the MQTT server. */
@Configuration(proxyBeanMethods = false)
@Import(QueueDeclarations.class)
public class ConnectionManagerConfiguration {

    /**
     * This node's queue, bound to the push exchange under its own name. It carries only copies of
     * what the devices' boxes hold, so it is a classic non-durable queue: no disk write per message
     * (a quorum queue would fsync each one) on the latency path. RabbitMQ deletes it once no node
     * has consumed it for {@code queue-expiry} (a node that died). A broker restart loses its
     * copies: the node then drains its live sessions' boxes again ({@link #redrainAfterReconnect}).
     */
    @Bean
    Declarables nodeQueue(CmProperties properties) {
        String name = MqttAddresses.nodeQueue(properties.nodeId());
        Queue queue = new Queue(name, false, false, false, Map.of("x-expires", properties.queueExpiry().toMillis()));
        return new Declarables(queue, BindingBuilder.bind(queue).to(new DirectExchange(Queues.EXCHANGE, true, false)).with(name));
    }

    /** On every RabbitMQ connection after the first, live sessions read their boxes again. */
    @Bean
    ConnectionListener redrainAfterReconnect(ConnectionFactory connections, SessionRegistry sessions) {
        java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
        ConnectionListener listener = connection -> {
            if (!first.getAndSet(false)) {
                sessions.sessions().forEach(SessionRegistry.Session::redrain);
            }
        };
        connections.addConnectionListener(listener);
        return listener;
    }

    @Bean
    ConfirmedPublisher confirmedPublisher(ConnectionFactory connections, JsonMapper json) {
        // confirms, mandatory and returns on a channel of its own (ConfirmedPublisher says why)
        return new ConfirmedPublisher(connections, json);
    }

    @Bean
    SessionRegistry sessionRegistry(DeviceSessions sessions, ReplicaLeases leases, ConfirmedPublisher publisher,
                                    CmProperties properties) {
        return new SessionRegistry(sessions, leases, publisher, properties.nodeId(), properties.lease());
    }

    /**
     * The node's timers: the lease renewed three times per lease period (one missed beat does not
     * lapse it), and the expiry sweep.
     */
    @Bean(destroyMethod = "shutdownNow")
    ScheduledExecutorService nodeTimers(SessionRegistry sessions, MqttOutbox outbox, CmMetrics metrics, CmProperties properties) {
        ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("cm-timers").daemon().factory());
        long period = Math.max(100, properties.lease().toMillis() / 3);
        sessions.heartbeat().join();
        executor.scheduleAtFixedRate(() -> sessions.heartbeat().exceptionally(error -> null), period, period, TimeUnit.MILLISECONDS);
        long sweep = properties.expirySweep().toMillis();
        executor.scheduleWithFixedDelay(new ExpirySweeper(outbox, metrics), sweep, sweep, TimeUnit.MILLISECONDS);
        return executor;
    }

    @Bean
    CmMetrics cmMetrics(MeterRegistry registry) {
        return new CmMetrics(registry);
    }

    @Bean(destroyMethod = "stop")
    SimpleMessageListenerContainer nodeQueueListener(ConnectionFactory connections, CmProperties properties,
                                                     SessionRegistry sessions, JsonMapper json) {
        SimpleMessageListenerContainer container = new SimpleMessageListenerContainer(connections);
        container.setQueueNames(MqttAddresses.nodeQueue(properties.nodeId()));
        container.setAcknowledgeMode(AcknowledgeMode.AUTO);
        container.setPrefetchCount(250);
        // One ack (multiple) per 25 copies instead of one per copy: the listener still handles each
        // copy as it arrives, only the ack waits (for 25 more, or the receive timeout when the queue
        // is idle). A copy handled but not yet acked when the node stops is dropped with the queue;
        // the device's box holds it. Well below the prefetch, so the broker never waits on the acks.
        container.setBatchSize(25);
        container.setMessageListener(new NodeQueueListener(sessions, json));
        // Below the MQTT server's phase: consuming before devices connect, and until they are gone.
        container.setPhase(MqttServer.PHASE - 100);
        return container;
    }

    @Bean
    MqttServer mqttServer(CmProperties properties, MqttCredentials credentials, SessionRegistry sessions,
                          MqttOutbox outbox, CmMetrics metrics) {
        return new MqttServer(properties, credentials, sessions, outbox, metrics);
    }
}
