package dev.herald.gateway.consume;

import org.springframework.amqp.core.Message;

/** Facts about a RabbitMQ delivery. */
final class Deliveries {
    private Deliveries() {
    }

    /**
     * Whether this work may have been (partly) handled before: redelivered, or counted by a quorum
     * queue's {@code x-delivery-count}. Only then is the cost of looking up finished targets paid.
     */
    static boolean seenBefore(Message message) {
        if (Boolean.TRUE.equals(message.getMessageProperties().getRedelivered())) {
            return true;
        }
        Object count = message.getMessageProperties().getHeader("x-delivery-count");
        return count instanceof Number number && number.longValue() > 0;
    }
}
