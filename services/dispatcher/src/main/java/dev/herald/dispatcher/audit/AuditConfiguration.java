package dev.herald.dispatcher.audit;

import dev.herald.store.audit.AuditLog;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Clock;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Wires the admin audit log. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(AuditProperties.class)
public class AuditConfiguration {

    @Bean
    AuditLog auditLog(RedisClusterAsyncCommands<String, String> redis, Clock clock, AuditProperties properties) {
        return new AuditLog(redis, clock, properties.retention());
    }
}
