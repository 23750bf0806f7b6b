package dev.herald.contract.payload;

import dev.herald.contract.Notification;
import dev.herald.contract.PushBatch;
import java.util.LinkedHashMap;
import java.util.Map;

/** Builds the JSON an MQTT device receives: id, title, body, data, acceptedAt (fields absent when null or empty). */
public final class MqttPayloads {
    private MqttPayloads() {
    }

    public static Map<String, Object> payload(PushBatch message) {
        Notification notification = message.notification();
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("id", message.messageId());
        if (notification.title() != null) {
            payload.put("title", notification.title());
        }
        if (notification.body() != null) {
            payload.put("body", notification.body());
        }
        if (!notification.data().isEmpty()) {
            payload.put("data", notification.data());
        }
        payload.put("acceptedAt", message.acceptedAt().toEpochMilli());
        return payload;
    }
}
