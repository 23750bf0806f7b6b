package dev.herald.store;

import dev.herald.store.app.AppCache;
import dev.herald.store.app.AppStore;
import dev.herald.store.crypto.CredentialCipher;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.mqtt.MqttCredentials;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.status.ExpansionProgress;
import dev.herald.store.status.MessageStatusStore;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

/**
 * The shared Redis-backed registry. One Lettuce connection serves every caller: it is thread-safe
 * and pipelines concurrent commands, which is what lets the gateway record thousands of outcomes a
 * second without a pool.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(StoreProperties.class)
public class StoreConfiguration {

    @Bean(destroyMethod = "shutdown")
    RedisClient redisClient(StoreProperties properties) {
        RedisClient client = RedisClient.create(RedisURI.create(properties.redisUri()));
        client.setOptions(ClientOptions.builder()
                // Fail commands fast while Redis is away instead of queueing them without bound.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(5)))
                .build());
        return client;
    }

    /**
     * Primary: the pub/sub connection below is a {@code StatefulRedisConnection} too, and must not be
     * injected where commands are meant.
     */
    @Bean(destroyMethod = "close")
    @Primary
    StatefulRedisConnection<String, String> redisConnection(RedisClient client) {
        return client.connect();
    }

    @Bean
    RedisAsyncCommands<String, String> redisCommands(StatefulRedisConnection<String, String> connection) {
        return connection.async();
    }

    @Bean(destroyMethod = "close")
    StatefulRedisPubSubConnection<String, String> redisChanges(RedisClient client) {
        return client.connectPubSub();
    }

    @Bean
    CredentialCipher credentialCipher(StoreProperties properties) {
        return new CredentialCipher(properties.cryptoKey());
    }

    @Bean
    AppStore appStore(RedisAsyncCommands<String, String> redis, CredentialCipher cipher) {
        return new AppStore(redis, cipher);
    }

    @Bean
    AppCache appCache(AppStore store, StatefulRedisPubSubConnection<String, String> redisChanges, StoreProperties properties) {
        return new AppCache(store, redisChanges, properties.appCacheTtl());
    }

    @Bean
    DeviceRegistry deviceRegistry(RedisAsyncCommands<String, String> redis) {
        return new DeviceRegistry(redis);
    }

    @Bean
    MessageStatusStore messageStatusStore(RedisAsyncCommands<String, String> redis, StoreProperties properties) {
        return new MessageStatusStore(redis, properties.statusTtl());
    }

    @Bean
    MqttCredentials mqttCredentials(StoreProperties properties) {
        return new MqttCredentials(properties.cryptoKey());
    }

    @Bean
    MqttOutbox mqttOutbox(RedisAsyncCommands<String, String> redis, StoreProperties properties) {
        return new MqttOutbox(redis, properties.mqttBoxSize(), properties.statusTtl());
    }

    @Bean
    ExpansionProgress expansionProgress(RedisAsyncCommands<String, String> redis, StoreProperties properties) {
        return new ExpansionProgress(redis, properties.statusTtl());
    }

    /** Part of readiness: without Redis neither sends nor deliveries can be recorded. */
    @Bean
    HealthIndicator redisHealthIndicator(StatefulRedisConnection<String, String> connection) {
        return () -> {
            try {
                String pong = connection.async().ping().get(2, java.util.concurrent.TimeUnit.SECONDS);
                return Health.up().withDetail("ping", pong).build();
            } catch (Exception e) {
                return Health.down().withDetail("error", e.getClass().getSimpleName()).build();
            }
        };
    }
}
