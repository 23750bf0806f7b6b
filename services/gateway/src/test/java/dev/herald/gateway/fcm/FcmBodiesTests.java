package dev.herald.gateway.fcm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.contract.payload.FcmRequests;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class FcmBodiesTests {
    private final JsonMapper json = JsonMapper.builder().build();
    private final FcmBodies bodies = new FcmBodies(json);
    private final Instant now = Instant.parse("2026-01-01T00:00:00.400Z");

    private static PushBatch batch(String messageId, Map<String, Map<String, Object>> overrides) {
        Instant accepted = Instant.parse("2026-01-01T00:00:00Z");
        return new PushBatch(messageId, "app", 0, Priority.normal,
                new Notification("Hi", "There \"quoted\" é", Map.of("k", "v"), overrides), "c1",
                accepted, accepted.plusSeconds(3600), List.of());
    }

    private static Target token(String token) {
        return new Target(Channel.fcm, token, null);
    }

    private String whole(PushBatch batch, Target target, Instant at) {
        return json.writeValueAsString(FcmRequests.body(batch, target, at));
    }

    private String spliced(PushBatch batch, Target target, Instant at) {
        return new String(bodies.body(batch, target, at), java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void eachTargetsBodyIsTheWholeSerializationWithItsToken() {
        PushBatch first = batch("m1", Map.of());
        PushBatch second = batch("m2", Map.of("fcm", Map.of("android", Map.of("restricted_package_name", "a.b"))));
        for (String token : List.of("fanout-token-1", "cXyZ:APA91b-_.2", "fanout-token-22")) {
            for (PushBatch batch : List.of(first, second)) {   // interleaved, as a replica's batches are
                assertThat(spliced(batch, token(token), now)).isEqualTo(whole(batch, token(token), now));
            }
        }
    }

    @Test
    void theTtlFollowsTheClock() {
        PushBatch batch = batch("m1", Map.of());
        Instant later = now.plusSeconds(61);
        assertThat(spliced(batch, token("t1"), now)).contains("\"ttl\":\"3599s\"");
        assertThat(spliced(batch, token("t1"), later)).isEqualTo(whole(batch, token("t1"), later)).contains("\"ttl\":\"3538s\"");
    }

    @Test
    void aTokenJsonWouldEscapeIsSerializedWhole() {
        PushBatch batch = batch("m1", Map.of());
        Target odd = token("to\"k\\en\u00e9");
        assertThat(spliced(batch, odd, now)).isEqualTo(whole(batch, odd, now));
    }

    @Test
    void anOverrideOfTheTokenWins() {
        PushBatch batch = batch("m1", Map.of("fcm", Map.of("token", "override-token")));
        assertThat(spliced(batch, token("t1"), now)).isEqualTo(whole(batch, token("t1"), now)).contains("override-token");
    }
}
