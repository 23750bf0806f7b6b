package dev.herald.store.mqtt;

import dev.herald.contract.Channel;

/**
 * The names MQTT delivery routes by: a device's MQTT topic, a connection-manager node's queue and
 * a device's target key in a message's status.
 */
public final class MqttAddresses {
    /** Prefix of the per-node queues; the routing key on the Herald exchange is the queue name. */
    public static final String NODE_QUEUE_PREFIX = "herald.cm.node.";

    private MqttAddresses() {
    }

    /** The queue of a connection-manager node, on which the gateway puts copies of boxed messages. */
    public static String nodeQueue(String nodeId) {
        return NODE_QUEUE_PREFIX + nodeId;
    }

    /** The MQTT topic a device subscribes to and receives its pushes on. */
    public static String deviceTopic(String appId, String deviceId) {
        return "apps/" + appId + "/devices/" + deviceId;
    }

    /** The status-store target key of an MQTT device. */
    public static String targetKey(String deviceId) {
        return Channel.mqtt + ":" + deviceId;
    }
}
