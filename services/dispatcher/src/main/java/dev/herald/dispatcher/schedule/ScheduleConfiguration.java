package dev.herald.dispatcher.schedule;

import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.dispatcher.send.SendService;
import dev.herald.store.StoreProperties;
import dev.herald.store.app.AppStore;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.schedule.ScheduledSends;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatusStore;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/** Wires scheduled sends. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ScheduleProperties.class)
public class ScheduleConfiguration {

    @Bean
    ScheduledSends scheduledSends(RedisClusterAsyncCommands<String, String> redis, HeraldFunctions functions,
                                  StoreProperties store) {
        return new ScheduledSends(redis, functions, store.statusTtl());
    }

    @Bean
    ScheduleMetrics scheduleMetrics(MeterRegistry registry) {
        return new ScheduleMetrics(registry);
    }

    @Bean
    ScheduleService scheduleService(ScheduledSends sends, MessageStatusStore status, DeviceRegistry devices, AppStore apps,
                                    ScheduleProperties properties, JsonMapper json, Clock clock, ScheduleMetrics metrics) {
        return new ScheduleService(sends, status, devices, apps, properties, json, clock, metrics);
    }

    @Bean
    Scheduler scheduler(ScheduledSends sends, MessageStatusStore status, MessageCancels cancels, DeviceRegistry devices,
                        SendService sendService, ScheduleService schedule, ScheduleProperties properties,
                        DispatcherProperties dispatcher, JsonMapper json, Clock clock, ScheduleMetrics metrics) {
        return new Scheduler(sends, status, cancels, devices, sendService, schedule, properties, dispatcher, json, clock, metrics);
    }
}
