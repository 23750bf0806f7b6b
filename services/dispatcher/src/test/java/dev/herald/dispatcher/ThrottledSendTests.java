package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** A send's throttle travels with its batches: a rate, or a spread turned into the rate that ends on time. */
class ThrottledSendTests extends DispatcherIntegrationTest {

    private static List<Map<String, String>> tokens(int count) {
        List<Map<String, String>> tokens = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            tokens.add(Map.of("channel", "fcm", "token", "throttled-tok-" + i));
        }
        return tokens;
    }

    private Api.Response send(TestApp app, int count, Object throttle) {
        return api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                "to", Map.of("tokens", tokens(count)), "title", "Hello", "ttl", 3600, "throttle", throttle));
    }

    @Test
    void aRateOrASpreadIsCarriedByEveryBatch() {
        TestApp app = createApp();
        drain(Queues.SEND_NORMAL);
        Api.Response perMinute = send(app, 600, Map.of("perMinute", 120));
        Api.Response spread = send(app, 600, Map.of("spreadMinutes", 7));
        assertThat(perMinute.status()).as(perMinute.toString()).isEqualTo(202);
        assertThat(spread.status()).as(spread.toString()).isEqualTo(202);

        List<JsonNode> queued = drain(Queues.SEND_NORMAL).stream().map(m -> Api.JSON.readTree(m.getBody())).toList();
        assertThat(queued.stream().filter(b -> b.get("messageId").asString().equals(perMinute.json().get("id").asString())))
                .hasSize(2).allSatisfy(b -> assertThat(b.get("throttlePerMinute").asLong()).isEqualTo(120));
        // 600 targets over 7 minutes: 86 a minute (rounded up, so it ends within the 7 minutes)
        assertThat(queued.stream().filter(b -> b.get("messageId").asString().equals(spread.json().get("id").asString())))
                .hasSize(2).allSatisfy(b -> assertThat(b.get("throttlePerMinute").asLong()).isEqualTo(86));
    }

    @Test
    void aThrottleNamingBothOrNeitherOrOutlastingTheTtlIsRefused() {
        TestApp app = createApp();
        Api.Response both = send(app, 1, Map.of("perMinute", 10, "spreadMinutes", 5));
        assertProblem(both, 400);
        assertThat(both.json().at("/errors/0/field").asString()).isEqualTo("throttle");
        assertProblem(send(app, 1, Map.of()), 400);
        Api.Response zero = send(app, 1, Map.of("perMinute", 0));
        assertProblem(zero, 400);
        assertThat(zero.json().at("/errors/0/field").asString()).isEqualTo("throttle.perMinute");
        Api.Response tooLong = send(app, 1, Map.of("spreadMinutes", 61));
        assertProblem(tooLong, 400);
        assertThat(tooLong.json().at("/errors/0/field").asString()).isEqualTo("throttle.spreadMinutes");
    }
}
