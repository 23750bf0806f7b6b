package dev.herald.gateway;

import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.gateway.apns.ApnsClientMetrics;
import dev.herald.gateway.apns.ApnsClientPool;
import dev.herald.gateway.apns.ApnsSender;
import dev.herald.gateway.audience.AudienceExpander;
import dev.herald.gateway.consume.AudienceListener;
import dev.herald.gateway.consume.ListenerConsumers;
import dev.herald.gateway.consume.PendingWork;
import dev.herald.gateway.consume.SendListener;
import dev.herald.gateway.deadletter.DeadLetters;
import dev.herald.gateway.delivery.Backoff;
import dev.herald.gateway.delivery.BatchDelivery;
import dev.herald.gateway.delivery.DeliveryMetrics;
import dev.herald.gateway.delivery.InFlightLimit;
import dev.herald.gateway.delivery.ProviderSender;
import dev.herald.gateway.fcm.FcmAccessTokens;
import dev.herald.store.app.FcmTokenHosts;
import dev.herald.gateway.fcm.FcmSender;
import dev.herald.gateway.lifecycle.TokenMetrics;
import dev.herald.gateway.lifecycle.TokenSweeper;
import dev.herald.gateway.mqtt.MqttSender;
import dev.herald.gateway.quota.DeliveryGate;
import dev.herald.gateway.quota.Parking;
import dev.herald.gateway.quota.QuotaMetrics;
import dev.herald.gateway.replica.GatewayReplica;
import dev.herald.gateway.webpush.WebPushMetrics;
import dev.herald.gateway.webpush.WebPushSender;
import dev.herald.store.app.AppCache;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.device.StaleTokens;
import dev.herald.store.mqtt.MqttHandoff;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.quota.RateBuckets;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.status.ExpansionProgress;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatusStore;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.amqp.autoconfigure.SimpleRabbitListenerContainerFactoryConfigurer;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.context.LifecycleProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/** Wires the data path: queues -> listeners -> delivery -> provider senders. */
@Configuration(proxyBeanMethods = false)
public class GatewayConfiguration {

    /** The system clock, unless one is given (tests share a settable clock between replicas). */
    @Bean
    @ConditionalOnMissingBean
    Clock clock() {
        return Clock.systemUTC();
    }

    @Bean
    SimpleRabbitListenerContainerFactory rabbitListenerContainerFactory(
            SimpleRabbitListenerContainerFactoryConfigurer configurer, ConnectionFactory connectionFactory,
            GatewayProperties properties) {
        SimpleRabbitListenerContainerFactory factory = new SimpleRabbitListenerContainerFactory();
        configurer.configure(factory, connectionFactory);
        // Acknowledged when the returned future completes, i.e. after the outcomes are recorded.
        factory.setAcknowledgeMode(AcknowledgeMode.MANUAL);
        factory.setPrefetchCount(properties.prefetch());
        // Consumers per lane from the record, the one place of their defaults. The customizer runs
        // after the endpoint configured the container, so nothing in the annotations overrides it.
        Map<String, Integer> consumers = Map.of(
                SendListener.HIGH, properties.consumers().high(),
                SendListener.NORMAL, properties.consumers().normal(),
                AudienceListener.ID, properties.consumers().audience());
        factory.setContainerCustomizer(container -> container.setConcurrentConsumers(
                consumers.get(container.getListenerId())));
        return factory;
    }

    @Bean
    ConfirmedPublisher confirmedPublisher(ConnectionFactory connections, JsonMapper json) {
        // confirms, mandatory and returns on a channel of its own (ConfirmedPublisher says why)
        return new ConfirmedPublisher(connections, json);
    }

    @Bean
    DeadLetters deadLetters(ConfirmedPublisher publisher, Clock clock) {
        return new DeadLetters(publisher, clock);
    }

    @Bean
    InFlightLimit inFlightLimit(GatewayProperties properties) {
        return new InFlightLimit(properties.maxInFlight());
    }

    @Bean
    DeliveryMetrics deliveryMetrics(MeterRegistry registry, InFlightLimit limit) {
        return new DeliveryMetrics(registry, limit);
    }

    @Bean(destroyMethod = "close")
    FcmSender fcmSender(GatewayProperties properties, FcmTokenHosts tokenHosts, JsonMapper json, Clock clock,
                        EventLoopGroup providerEventLoops) {
        return new FcmSender(properties.fcm(), new FcmAccessTokens(clock, tokenHosts), json, clock, providerEventLoops);
    }

    /** The FCM and APNs connections' event loops (two: a pod has a core or two). */
    @Bean(destroyMethod = "shutdownGracefully")
    @SuppressWarnings("deprecation") // Pushy picks its channel class from the group's type; it knows NioEventLoopGroup
    EventLoopGroup providerEventLoops() {
        return new NioEventLoopGroup(2);
    }

    @Bean
    MeterFilter apnsClientMetricNames() {
        return ApnsClientMetrics.names();
    }

    @Bean(destroyMethod = "close")
    ApnsClientPool apnsClientPool(GatewayProperties properties, EventLoopGroup providerEventLoops, MeterRegistry registry) {
        return new ApnsClientPool(properties.apns(), providerEventLoops, ApnsClientMetrics.listener(registry));
    }

    @Bean
    ApnsSender apnsSender(ApnsClientPool pool, JsonMapper json) {
        return new ApnsSender(pool, json);
    }

    @Bean
    MqttSender mqttSender(MqttOutbox outbox, ConfirmedPublisher publisher, JsonMapper json) {
        return new MqttSender(new MqttHandoff(outbox, publisher, json));
    }

    @Bean(destroyMethod = "close")
    WebPushSender webPushSender(GatewayProperties properties, MeterRegistry registry, JsonMapper json, Clock clock) {
        return new WebPushSender(properties.webpush(), new WebPushMetrics(registry), json, clock);
    }

    @Bean
    QuotaMetrics quotaMetrics(MeterRegistry registry) {
        return new QuotaMetrics(registry);
    }

    @Bean
    DeliveryGate deliveryGate(RateBuckets buckets, GatewayProperties properties, QuotaMetrics metrics, Clock clock) {
        return new DeliveryGate(buckets, properties.quota(), metrics, clock);
    }

    @Bean
    BatchDelivery batchDelivery(List<ProviderSender> senders, AppCache apps, DeviceRegistry devices,
                                MessageStatusStore status, MessageCancels cancels, DeadLetters deadLetters, InFlightLimit limit,
                                GatewayProperties properties, DeliveryMetrics metrics, Clock clock,
                                DeliveryGate gate, ConfirmedPublisher publisher, QuotaMetrics quotaMetrics) {
        return new BatchDelivery(senders, apps, devices, status, cancels, deadLetters, limit, new Backoff(properties.retry()),
                metrics, clock, gate, new Parking(publisher), quotaMetrics);
    }

    @Bean
    AudienceExpander audienceExpander(DeviceRegistry devices, MessageStatusStore status, MessageCancels cancels,
                                      ExpansionProgress progress, ConfirmedPublisher publisher, GatewayProperties properties,
                                      TokenMetrics tokenMetrics) {
        return new AudienceExpander(devices, status, cancels, progress, publisher, properties.audience(), tokenMetrics);
    }

    @Bean
    TokenMetrics tokenMetrics(MeterRegistry registry) {
        return new TokenMetrics(registry);
    }

    @Bean
    TokenSweeper tokenSweeper(RedisClusterAsyncCommands<String, String> redis, StaleTokens stale, TokenMetrics metrics,
                              GatewayProperties properties) {
        return new TokenSweeper(redis, stale, metrics, properties.tokenSweep());
    }

    /** The token sweep's timer: each replica ticks, the lease picks the one that sweeps. */
    @Bean(destroyMethod = "shutdownNow")
    ScheduledExecutorService tokenSweepTimer(TokenSweeper sweeper, GatewayProperties properties) {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().name("token-sweep").daemon().factory());
        long every = properties.tokenSweep().interval().toMillis();
        timer.scheduleWithFixedDelay(sweeper, every, every, TimeUnit.MILLISECONDS);
        return timer;
    }

    @Bean
    GatewayReplica gatewayReplica(ReplicaLeases leases, GatewayProperties properties, InFlightLimit limit,
                                  DeliveryMetrics metrics, Clock clock) {
        return new GatewayReplica(leases, Replica.newId("gateway"), properties.replicaLease(), limit, metrics, clock);
    }

    @Bean
    ListenerConsumers listenerConsumers() {
        return new ListenerConsumers();
    }

    @Bean
    PendingWork pendingWork(ListenerConsumers consumers, LifecycleProperties lifecycle) {
        return new PendingWork(consumers, lifecycle.getTimeoutPerShutdownPhase());
    }

    @Bean
    SendListener sendListener(BatchDelivery delivery, PendingWork pending, JsonMapper json) {
        return new SendListener(delivery, pending, json);
    }

    @Bean
    AudienceListener audienceListener(AudienceExpander expander, PendingWork pending, JsonMapper json) {
        return new AudienceListener(expander, pending, json);
    }
}
