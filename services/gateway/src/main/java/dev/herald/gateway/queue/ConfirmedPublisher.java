package dev.herald.gateway.queue;

import java.util.Map;
import java.util.UUID;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.CorrelationData;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

/**
 * Publishes persistent JSON messages and completes only when RabbitMQ has confirmed them (and
 * could route them): what the gateway publishes (expanded batches, dead letters) is safe before the
 * work that produced it is acknowledged.
 */
public final class ConfirmedPublisher {
    private final RabbitTemplate rabbit;
    private final JsonMapper json;

    public ConfirmedPublisher(RabbitTemplate rabbit, JsonMapper json) {
        this.rabbit = rabbit;
        this.json = json;
    }

    public Mono<Void> publish(String exchange, String routingKey, Object body, Map<String, Object> headers) {
        return Mono.defer(() -> {
            MessageProperties properties = new MessageProperties();
            properties.setContentType(MessageProperties.CONTENT_TYPE_JSON);
            properties.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
            headers.forEach(properties::setHeader);
            Message message = new Message(json.writeValueAsBytes(body), properties);
            CorrelationData correlation = new CorrelationData(UUID.randomUUID().toString());
            // send() may block under RabbitMQ flow control, so it runs off the event loop.
            return Mono.fromRunnable(() -> rabbit.send(exchange, routingKey, message, correlation))
                    .subscribeOn(Schedulers.boundedElastic())
                    .then(Mono.fromFuture(correlation.getFuture()))
                    .flatMap(confirm -> {
                        if (!confirm.ack()) {
                            return Mono.error(new IllegalStateException("RabbitMQ refused the message: " + confirm.reason()));
                        }
                        if (correlation.getReturned() != null) {
                            return Mono.error(new IllegalStateException("unroutable: " + correlation.getReturned().getReplyText()));
                        }
                        return Mono.<Void>empty();
                    });
        });
    }
}
