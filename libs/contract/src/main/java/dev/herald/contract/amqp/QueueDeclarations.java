package dev.herald.contract.amqp;

import dev.herald.contract.QueueTopology;
import dev.herald.contract.Queues;
import java.util.ArrayList;
import java.util.List;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.Declarable;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.FanoutExchange;
import org.springframework.amqp.core.Queue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Declares the queue topology through Spring AMQP's {@code RabbitAdmin}, on the first connection and
 * again on every reconnection (a broker that lost its definitions gets them back). The arguments
 * come from {@link QueueTopology} in the contract, so the dispatcher and the gateway, which both import
 * this class, declare exactly the same queues: RabbitMQ refuses a redeclaration with different arguments.
 * <ul>
 * <li>{@code herald.push}: durable direct exchange, routing key = queue name;</li>
 * <li>{@code herald.send.high}, {@code herald.send.normal}, {@code herald.audience}: durable quorum
 * queues dead-lettering at-least-once to {@code herald.dead} ({@code x-dead-letter-strategy:
 * at-least-once} requires {@code x-overflow: reject-publish}, RabbitMQ 3.10+), with a delivery limit;</li>
 * <li>{@code herald.dead}: fanout exchange and the quorum queue bound to it;</li>
 * <li>{@code herald.park}: fanout exchange and the quorum queue {@code herald.parked} bound to it, whose
 * entries go back to {@code herald.push} after a fixed delay (batches waiting for a quota).</li>
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
public class QueueDeclarations {

    @Bean
    Declarables heraldTopology() {
        DirectExchange push = new DirectExchange(Queues.EXCHANGE, true, false);
        FanoutExchange dead = new FanoutExchange(Queues.DEAD_LETTER_EXCHANGE, true, false);
        List<Declarable> all = new ArrayList<>(List.of(push, dead));
        for (String name : QueueTopology.WORK_QUEUES) {
            Queue queue = new Queue(name, true, false, false, QueueTopology.workQueueArguments());
            all.add(queue);
            all.add(BindingBuilder.bind(queue).to(push).with(name));
        }
        Queue deadQueue = new Queue(Queues.DEAD, true, false, false, QueueTopology.deadQueueArguments());
        all.add(deadQueue);
        all.add(BindingBuilder.bind(deadQueue).to(dead));
        FanoutExchange park = new FanoutExchange(Queues.PARK_EXCHANGE, true, false);
        Queue parked = new Queue(Queues.PARKED, true, false, false, QueueTopology.parkedQueueArguments());
        all.add(park);
        all.add(parked);
        all.add(BindingBuilder.bind(parked).to(park));
        return new Declarables(all);
    }
}
