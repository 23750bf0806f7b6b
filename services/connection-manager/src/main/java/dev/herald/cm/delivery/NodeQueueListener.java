package dev.herald.cm.delivery;

import dev.herald.cm.session.SessionRegistry;
import dev.herald.cm.session.Takeover;
import dev.herald.contract.MqttDelivery;
import dev.herald.store.mqtt.MqttOutbox;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageListener;
import tools.jackson.databind.json.JsonMapper;

/**
 * Consumes this node's queue: message copies for devices connected here, and takeover notices from
 * other nodes. Handled as each arrives and acknowledged automatically, 25 at a time (the container's
 * batch): a copy for a device that is no longer here is dropped, because the device's box still
 * holds the message.
 */
public final class NodeQueueListener implements MessageListener {
    private final SessionRegistry sessions;
    private final JsonMapper json;

    public NodeQueueListener(SessionRegistry sessions, JsonMapper json) {
        this.sessions = sessions;
        this.json = json;
    }

    @Override
    public void onMessage(Message message) {
        if (message.getMessageProperties().getHeaders().containsKey(Takeover.HEADER)) {
            sessions.takeover(json.readValue(message.getBody(), Takeover.class));
            return;
        }
        MqttDelivery delivery = json.readValue(message.getBody(), MqttDelivery.class);
        sessions.find(delivery.appId(), delivery.deviceId()).ifPresent(session ->
                session.offer(new MqttOutbox.Entry(delivery.messageId(), delivery.payload(), delivery.expiresAt())));
    }
}
