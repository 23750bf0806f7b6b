package dev.herald.gateway.consume;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.amqp.rabbit.connection.RabbitUtils;
import org.springframework.amqp.rabbit.listener.ConsumeOkEvent;
import org.springframework.context.ApplicationListener;

/**
 * The listener containers' broker consumers (consumer tag and channel), learnt from their
 * consume-ok. A graceful stop cancels them itself because stopping a container also closes its
 * channels as soon as its threads are idle, and a listener that returns a future leaves them idle
 * while its work is still running: RabbitMQ would requeue that work for another replica to send again.
 * Cancelling on the channel stops new deliveries and leaves the channel open for the acks.
 */
public final class ListenerConsumers implements ApplicationListener<ConsumeOkEvent> {
    private final Map<String, Channel> channelsByTag = new ConcurrentHashMap<>();

    @Override
    public void onApplicationEvent(ConsumeOkEvent event) {
        if (event.getSource() instanceof DefaultConsumer consumer) {
            channelsByTag.values().removeIf(channel -> !channel.isOpen()); // consumers restarted after a failure
            channelsByTag.put(event.getConsumerTag(), consumer.getChannel());
        }
    }

    /** Sends basic.cancel for every consumer whose channel is open; returns how many. */
    public int cancelAll() {
        int cancelled = 0;
        for (Map.Entry<String, Channel> consumer : channelsByTag.entrySet()) {
            if (consumer.getValue().isOpen()) {
                RabbitUtils.cancel(consumer.getValue(), consumer.getKey());
                cancelled++;
            }
        }
        channelsByTag.clear();
        return cancelled;
    }
}
