package dev.herald.gateway.consume;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import org.springframework.amqp.rabbit.connection.RabbitUtils;
import org.springframework.amqp.rabbit.listener.ConsumeOkEvent;
import org.springframework.context.ApplicationListener;

/**
 * The listener containers' broker consumers (consumer tag and channel), learnt from their
 * consume-ok. A graceful stop cancels them itself because stopping a container also closes its
 * channels as soon as its threads are idle, and a listener that returns a future leaves them idle
 * while its work is still running: RabbitMQ would requeue that work for another replica to send again.
 * Cancelling on the channel stops new deliveries and leaves the channel open for the acks.
 *
 * <p>Kept is the connection's channel itself, taken from the container's cached channel proxy at
 * consume-ok: once the connection is lost the proxy can be given a new channel on the next
 * connection (an ack of a delivery from the lost one then fails there with "unknown delivery tag"),
 * so the proxy cannot tell whether a delivery's channel is still open; the channel it wrapped can.
 */
public final class ListenerConsumers implements ApplicationListener<ConsumeOkEvent> {
    private final Map<String, Channel> channelsByTag = new ConcurrentHashMap<>();
    /** Consumers already cancelled: their channels stay known, deliveries on the way to them still arrive. */
    private final Set<String> cancelled = ConcurrentHashMap.newKeySet();

    @Override
    public void onApplicationEvent(ConsumeOkEvent event) {
        if (event.getSource() instanceof DefaultConsumer consumer) {
            channelsByTag.values().removeIf(channel -> !channel.isOpen()); // consumers restarted after a failure
            cancelled.retainAll(channelsByTag.keySet());
            Channel channel = consumer.getChannel();
            channelsByTag.put(event.getConsumerTag(), channel instanceof ChannelProxy proxy ? proxy.getTargetChannel() : channel);
        }
    }

    /** The channel the consumer with this tag receives on, while it is open. */
    public Optional<Channel> openChannelOf(String consumerTag) {
        return Optional.ofNullable(consumerTag == null ? null : channelsByTag.get(consumerTag)).filter(Channel::isOpen);
    }

    /** Sends basic.cancel for every consumer not cancelled yet whose channel is open; returns how many. */
    public int cancelAll() {
        int count = 0;
        for (Map.Entry<String, Channel> consumer : channelsByTag.entrySet()) {
            if (consumer.getValue().isOpen() && cancelled.add(consumer.getKey())) {
                RabbitUtils.cancel(consumer.getValue(), consumer.getKey());
                count++;
            }
        }
        return count;
    }
}
