package dev.herald.cm.session;

/**
 * Sent to the node that held a device when the device connected to another node: that node closes
 * the named connection (MQTT 5: DISCONNECT 0x8E session taken over). Travels on the node's queue
 * with the {@link #HEADER} header set.
 */
public record Takeover(String appId, String deviceId, String connectionId) {
    public static final String HEADER = "x-herald-takeover";
}
