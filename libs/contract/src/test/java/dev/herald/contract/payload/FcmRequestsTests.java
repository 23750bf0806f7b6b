package dev.herald.contract.payload;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FcmRequestsTests {

    @Test
    @SuppressWarnings("unchecked")
    void carriesTokenContentRemainingTtlPriorityCollapseKeyAndOverrides() {
        Instant now = Instant.parse("2026-01-01T00:00:00Z");
        PushBatch batch = new PushBatch("m1", "app", 0, Priority.high,
                new Notification("Hi", "There", Map.of("k", "v"), Map.of("fcm", Map.of("android", Map.of("restricted_package_name", "a.b")))),
                "c1", now.minusSeconds(10), now.plusSeconds(90), List.of());
        Map<String, Object> message = (Map<String, Object>) FcmRequests.body(batch, new Target(Channel.fcm, "tok", null), now).get("message");
        assertThat(message).containsEntry("token", "tok")
                .containsEntry("notification", Map.of("title", "Hi", "body", "There"))
                .containsEntry("data", Map.of("k", "v", Notification.MESSAGE_ID_KEY, "m1"));
        assertThat((Map<String, Object>) message.get("android"))
                .containsEntry("ttl", "90s").containsEntry("priority", "high").containsEntry("collapse_key", "c1")
                .containsEntry("restricted_package_name", "a.b");
    }
}
