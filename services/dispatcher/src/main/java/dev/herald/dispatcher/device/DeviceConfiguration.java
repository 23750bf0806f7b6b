package dev.herald.dispatcher.device;

import java.net.InetAddress;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The device API's checks of Web Push endpoints. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(WebPushEndpointProperties.class)
public class DeviceConfiguration {

    @Bean
    WebPushEndpoints webPushEndpoints(WebPushEndpointProperties properties) {
        return new WebPushEndpoints(properties, InetAddress::getAllByName);
    }
}
