package dev.herald.dispatcher.send;

import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.dispatcher.problem.RequestValidator;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.idempotency.IdempotencyKeys;
import dev.herald.store.mqtt.MqttHandoff;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.status.MessageStatusStore;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/** Wires the send path. */
@Configuration(proxyBeanMethods = false)
public class SendConfiguration {

    /** The system clock; tests give their own {@code Clock} bean to move time (scheduled sends). */
    @Bean
    @ConditionalOnMissingBean(Clock.class)
    Clock clock() {
        return Clock.systemUTC();
    }

    @Bean
    ConfirmedPublisher confirmedPublisher(ConnectionFactory connections, JsonMapper json) {
        // confirms, mandatory and returns on a channel of its own (ConfirmedPublisher says why)
        return new ConfirmedPublisher(connections, json);
    }

    @Bean
    BrokerAlarm brokerAlarm(CachingConnectionFactory connections) {
        BrokerAlarm alarm = new BrokerAlarm();
        connections.addConnectionListener(alarm);
        return alarm;
    }

    @Bean
    IdempotencyKeys idempotencyKeys(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions,
                                    DispatcherProperties properties) {
        return new IdempotencyKeys(redis, functions, properties.idempotencyTtl());
    }

    @Bean
    SendMetrics sendMetrics(MeterRegistry registry) {
        return new SendMetrics(registry);
    }

    @Bean
    SendService sendService(RequestValidator validator, MessageStatusStore status, DeviceRegistry devices,
                            IdempotencyKeys keys, ConfirmedPublisher publisher, SendMetrics metrics,
                            DispatcherProperties properties, JsonMapper json, Clock clock, SendScheduler scheduler,
                            BrokerAlarm alarm, MqttOutbox outbox) {
        return new SendService(validator, status, devices, keys, publisher, metrics, properties, json, clock, scheduler, alarm,
                new MqttHandoff(outbox, publisher, json));
    }
}
