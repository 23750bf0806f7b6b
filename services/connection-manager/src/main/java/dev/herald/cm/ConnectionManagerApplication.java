package dev.herald.cm;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import dev.herald.store.StoreConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Import;

/** The connection manager: devices on MQTT, fed from their boxes in Redis and their node's queue. */
@SpringBootApplication
@EnableConfigurationProperties(CmProperties.class)
@Import(StoreConfiguration.class)
public class ConnectionManagerApplication {
    public static void main(String[] args) {
        SpringApplication.run(ConnectionManagerApplication.class, args);
    }
}
