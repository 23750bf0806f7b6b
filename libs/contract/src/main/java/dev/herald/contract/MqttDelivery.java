package dev.herald.contract;

import java.util.Objects;

/**
 * What the gateway puts on a connection-manager node's queue (named by the store's MQTT slice,
 * {@code dev.herald.store.mqtt.MqttAddresses}) for a device that
 * node holds: a copy of the message the device's box in Redis already has, so the node delivers it
 * without reading Redis. The box stays the source of truth: losing this copy (a node that died)
 * delays the message until the device's next session drains its box, it never loses it.
 *
 * @param payload   the JSON published to the device, built by {@link dev.herald.contract.payload.MqttPayloads}
 * @param expiresAt epoch millis after which the message is not delivered but expired
 */
public record MqttDelivery(String appId, String deviceId, String messageId, String payload, long expiresAt) {
    public MqttDelivery {
        Objects.requireNonNull(appId, "appId");
        Objects.requireNonNull(deviceId, "deviceId");
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(payload, "payload");
    }
}
