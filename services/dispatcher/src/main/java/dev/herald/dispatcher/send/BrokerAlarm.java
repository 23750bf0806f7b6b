package dev.herald.dispatcher.send;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionBlockedEvent;
import org.springframework.amqp.rabbit.connection.ConnectionListener;
import org.springframework.amqp.rabbit.connection.ConnectionUnblockedEvent;
import org.springframework.context.event.EventListener;

/**
 * Whether RabbitMQ is blocking this dispatcher's publishing connection: it does so while one of its
 * resource alarms (memory high watermark, disk free limit) is raised, and then neither reads nor
 * confirms what is published. A send during an alarm is refused at once (503 with Retry-After)
 * rather than left to wait for a confirm that cannot come; sends succeed again once the broker
 * unblocks the connection. A closed connection is no longer blocked: a new one is told again if
 * the alarm still holds.
 */
public final class BrokerAlarm implements ConnectionListener {
    private static final Logger log = LoggerFactory.getLogger(BrokerAlarm.class);

    private final AtomicReference<String> reason = new AtomicReference<>();

    /** RabbitMQ's reason (e.g. "low on memory") while it blocks the publishing connection. */
    public Optional<String> blocked() {
        return Optional.ofNullable(reason.get());
    }

    @EventListener
    void onBlocked(ConnectionBlockedEvent event) {
        if (reason.getAndSet(event.getReason()) == null) {
            log.warn("RabbitMQ blocks publishing ({}): sends are answered 503 until it clears", event.getReason());
        }
    }

    @EventListener
    void onUnblocked(ConnectionUnblockedEvent event) {
        clear("RabbitMQ unblocked publishing: sends are accepted again");
    }

    @Override
    public void onCreate(Connection connection) {
        // Nothing: a new connection is not blocked until the broker says so.
    }

    @Override
    public void onClose(Connection connection) {
        clear("the blocked RabbitMQ connection closed: sends are tried again");
    }

    private void clear(String message) {
        if (reason.getAndSet(null) != null) {
            log.info(message);
        }
    }
}
