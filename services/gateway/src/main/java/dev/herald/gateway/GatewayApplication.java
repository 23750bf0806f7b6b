package dev.herald.gateway;

import dev.herald.contract.amqp.QueueDeclarations;
import dev.herald.store.StoreConfiguration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/** Consumes push work from RabbitMQ and delivers it to FCM and APNs. */
@SpringBootApplication
@EnableConfigurationProperties(GatewayProperties.class)
@Import({StoreConfiguration.class, QueueDeclarations.class})
public class GatewayApplication {
    public static void main(String[] args) {
        SpringApplication.run(GatewayApplication.class, args);
    }
}
