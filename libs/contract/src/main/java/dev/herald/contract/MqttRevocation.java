package dev.herald.contract;

/**
 * Sent by the dispatcher to the connection-manager node holding a device whose MQTT credentials were
 * just revoked: that node closes the named connection (MQTT 5: DISCONNECT 0x87 not authorized).
 * Travels on the node's queue ({@code herald.cm.node.<node>}) with the {@link #HEADER} header set.
 */
public record MqttRevocation(String appId, String deviceId, String connectionId) {
    public static final String HEADER = "x-herald-revoked";
}
