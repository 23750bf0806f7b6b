package dev.herald.dispatcher;

import dev.herald.store.StoreConfiguration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import dev.herald.contract.amqp.QueueDeclarations;
import org.springframework.context.annotation.Import;

/**
 * The Herald Dispatcher: the HTTP API that registers apps and devices and accepts sends. A send is
 * answered 202 only once RabbitMQ has confirmed every part of it; delivery happens behind the queue.
 */
@SpringBootApplication
@EnableConfigurationProperties(DispatcherProperties.class)
@Import({StoreConfiguration.class, QueueDeclarations.class})
public class DispatcherApplication {

    public static void main(String[] args) {
        SpringApplication.run(DispatcherApplication.class, args);
    }
}
