package dev.herald.store;

import dev.herald.store.app.ApiKeyIndex;
import dev.herald.store.app.AppCache;
import dev.herald.store.app.AppStore;
import dev.herald.store.app.FcmTokenHosts;
import dev.herald.store.crypto.CredentialCipher;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.device.StaleTokens;
import dev.herald.store.mqtt.DeviceSessions;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.mqtt.CredentialGenerations;
import dev.herald.store.mqtt.MqttCredentials;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.quota.RateBuckets;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.RedisLink;
import dev.herald.store.status.ExpansionProgress;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatusStore;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The store: the one owner of Herald's Redis data model (libs/store/README.md). Its time comes from
 * the application's {@link Clock} bean when there is one (the services and tests may set it), else
 * the system clock in UTC.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(StoreProperties.class)
public class StoreConfiguration {

    @Bean(destroyMethod = "close")
    RedisLink redisLink(StoreProperties properties) {
        return RedisLink.connect(properties.redisUri(), properties.redisCluster());
    }

    @Bean
    RedisClusterAsyncCommands<String, String> redisCommands(RedisLink link) {
        return link.async();
    }

    @Bean
    HeraldFunctions heraldFunctions(RedisClusterAsyncCommands<String, String> redis) {
        return new HeraldFunctions(redis);
    }

    @Bean(destroyMethod = "close")
    StatefulRedisPubSubConnection<String, String> redisChanges(RedisLink link) {
        return link.pubSub();
    }

    private static Clock clock(ObjectProvider<Clock> clock) {
        return clock.getIfAvailable(Clock::systemUTC);
    }

    @Bean
    CredentialCipher credentialCipher(StoreProperties properties) {
        return new CredentialCipher(properties.cryptoKey(), properties.cryptoPreviousKeys());
    }

    @Bean
    FcmTokenHosts fcmTokenHosts(StoreProperties properties) {
        return FcmTokenHosts.of(properties.fcmTokenHosts());
    }

    @Bean
    AppStore appStore(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, CredentialCipher cipher,
                      ObjectProvider<Clock> clock) {
        return new AppStore(redis, functions, cipher, clock(clock));
    }

    @Bean
    AppCache appCache(AppStore store, StatefulRedisPubSubConnection<String, String> redisChanges, StoreProperties properties) {
        return new AppCache(store, redisChanges, properties.appCacheTtl());
    }

    @Bean
    ApiKeyIndex apiKeyIndex(RedisClusterAsyncCommands<String, String> redis) {
        return new ApiKeyIndex(redis);
    }

    @Bean
    DeviceRegistry deviceRegistry(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, ObjectProvider<Clock> clock,
                                  StoreProperties properties) {
        return new DeviceRegistry(redis, functions, clock(clock), properties.tokens().staleAfter());
    }

    @Bean
    StaleTokens staleTokens(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, ObjectProvider<Clock> clock,
                            StoreProperties properties) {
        return new StaleTokens(redis, functions, clock(clock), properties.tokens());
    }

    @Bean
    MessageCancels messageCancels(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions,
                                  StoreProperties properties, ObjectProvider<Clock> clock) {
        return new MessageCancels(redis, functions, properties.statusTtl(), clock(clock));
    }

    @Bean
    MessageStatusStore messageStatusStore(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions,
                                          StoreProperties properties, ObjectProvider<Clock> clock) {
        return new MessageStatusStore(redis, functions, properties.statusTtl(), clock(clock), properties.outcomeLinger());
    }

    @Bean
    MqttCredentials mqttCredentials(StoreProperties properties) {
        return new MqttCredentials(properties.cryptoKey(), properties.cryptoPreviousKeys());
    }

    @Bean
    CredentialGenerations credentialGenerations(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions) {
        return new CredentialGenerations(redis, functions);
    }

    @Bean
    DeviceSessions deviceSessions(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions,
                                  ReplicaLeases leases, ObjectProvider<Clock> clock) {
        return new DeviceSessions(redis, functions, leases, clock(clock));
    }

    @Bean
    ReplicaLeases replicaLeases(RedisClusterAsyncCommands<String, String> redis) {
        return new ReplicaLeases(redis);
    }

    @Bean
    MqttOutbox mqttOutbox(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions, MessageStatusStore status,
                          MessageCancels cancels, DeviceSessions sessions, StoreProperties properties, ObjectProvider<Clock> clock) {
        return new MqttOutbox(redis, functions, status, cancels, sessions, properties.mqttBoxSize(), clock(clock));
    }

    @Bean
    ExpansionProgress expansionProgress(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions,
                                        StoreProperties properties) {
        return new ExpansionProgress(redis, functions, properties.statusTtl());
    }

    @Bean
    RateBuckets rateBuckets(HeraldFunctions functions, ObjectProvider<Clock> clock) {
        return new RateBuckets(functions, clock(clock));
    }

    /** Part of readiness: without Redis neither sends nor deliveries can be recorded. */
    @Bean
    HealthIndicator redisHealthIndicator(RedisClusterAsyncCommands<String, String> redis) {
        return () -> {
            try {
                String pong = redis.ping().get(2, TimeUnit.SECONDS);
                return Health.up().withDetail("ping", pong).build();
            } catch (Exception e) {
                return Health.down().withDetail("error", e.getClass().getSimpleName()).build();
            }
        };
    }
}
