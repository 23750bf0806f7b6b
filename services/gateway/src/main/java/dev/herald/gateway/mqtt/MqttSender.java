package dev.herald.gateway.mqtt;

import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.ProviderSender;
import dev.herald.store.app.App;
import dev.herald.store.mqtt.MqttHandoff;
import reactor.core.publisher.Mono;

/**
 * The {@code mqtt} channel: hands the target to its device ({@link MqttHandoff}: the device's box in
 * Redis, and a copy on the queue of the node that holds the device live). The final outcome comes
 * from the connection manager: {@code delivered} on the device's PUBACK. An offline device gets the
 * box drained when it connects.
 */
public final class MqttSender implements ProviderSender {
    private final MqttHandoff handoff;

    public MqttSender(MqttHandoff handoff) {
        this.handoff = handoff;
    }

    @Override
    public Channel channel() {
        return Channel.mqtt;
    }

    @Override
    public Mono<ProviderResponse> send(App app, PushBatch message, Target target) {
        return Mono.fromFuture(() -> handoff.hand(message, target)).thenReturn(ProviderResponse.HANDED_OFF);
    }
}
