package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Per-app API rate limits: set through the admin API, answered 429 problem+json with Retry-After. */
class RateLimitTests extends DispatcherIntegrationTest {

    private Api.Response stats(TestApp app) {
        return api().get("/v1/apps/" + app.id() + "/stats", app.key());
    }

    @Test
    void anAppOverItsRateIsAnswered429WithRetryAfterAndAnotherAppIsNot() {
        TestApp limited = createApp();
        TestApp other = createApp();
        Api.Response set = api().json("PUT", "/v1/apps/" + limited.id() + "/limits", ADMIN_TOKEN, Map.of("apiPerSecond", 2));
        assertThat(set.status()).as(set.toString()).isEqualTo(200);
        assertThat(set.json().path("apiPerSecond").asLong()).isEqualTo(2);

        int passed = 0;
        Api.Response refused = null;
        long started = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            Api.Response response = stats(limited);
            if (response.status() == 200) {
                passed++;
            } else {
                refused = response;
            }
            assertThat(stats(other).status()).isEqualTo(200);
        }
        double seconds = (System.nanoTime() - started) / 1e9;

        // A burst of 2, then 2 a second: what passed is bounded by the time the loop took.
        assertThat(passed).isBetween(2, 2 + (int) Math.ceil(seconds * 2) + 1);
        assertThat(refused).as("no request was refused in %.2f s", seconds).isNotNull();
        assertProblem(refused, 429);
        assertThat(refused.json().path("type").asString()).isEqualTo("urn:herald:problem:rate-limited");
        assertThat(refused.headers().get("retry-after")).containsExactly("1");
        assertThat(api().get("/v1/apps/" + limited.id(), ADMIN_TOKEN).json().at("/limits/apiPerSecond").asLong()).isEqualTo(2);
    }

    @Test
    void limitsOutOfRangeAreRefusedAndNullsGoBackToTheDefaults() {
        TestApp app = createApp();
        Api.Response negative = api().json("PUT", "/v1/apps/" + app.id() + "/limits", ADMIN_TOKEN, Map.of("fcmPerMinute", -5));
        assertProblem(negative, 400);
        assertThat(negative.json().at("/errors/0/field").asString()).isEqualTo("fcmPerMinute");
        assertProblem(api().json("PUT", "/v1/apps/" + app.id() + "/limits", ADMIN_TOKEN, Map.of("apiPerSecond", "fast")), 400);
        assertProblem(api().json("PUT", "/v1/apps/no-such-app/limits", ADMIN_TOKEN, Map.of("apiPerSecond", 5)), 404);
        assertProblem(api().json("PUT", "/v1/apps/" + app.id() + "/limits", app.key(), Map.of("apiPerSecond", 5)), 401);

        assertThat(api().json("PUT", "/v1/apps/" + app.id() + "/limits", ADMIN_TOKEN,
                Map.of("fcmPerMinute", 1200, "apnsPerMinute", 600)).status()).isEqualTo(200);
        Map<String, Object> reset = new HashMap<>();
        reset.put("fcmPerMinute", null);
        reset.put("apnsPerMinute", 600);
        api().json("PUT", "/v1/apps/" + app.id() + "/limits", ADMIN_TOKEN, reset);
        var limits = api().get("/v1/apps/" + app.id(), ADMIN_TOKEN).json().path("limits");
        assertThat(limits.hasNonNull("fcmPerMinute")).as(limits.toString()).isFalse();
        assertThat(limits.path("apnsPerMinute").asLong()).isEqualTo(600);
    }
}
