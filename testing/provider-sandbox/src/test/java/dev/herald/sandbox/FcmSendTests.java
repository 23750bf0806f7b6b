package dev.herald.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.sandbox.faults.FaultsUpdate;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** FCM HTTP v1 against a running sandbox, spoken as h2c with an access token from google-auth-library. */
class FcmSendTests {
    private static ProviderSandbox sandbox;
    private static SandboxHttp http;
    private static String accessToken;

    @BeforeAll
    static void start() {
        sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=0");
        http = new SandboxHttp(sandbox);
        accessToken = http.accessToken();
    }

    @AfterAll
    static void stop() {
        sandbox.close();
    }

    @BeforeEach
    void clean() {
        sandbox.counts().reset();
        sandbox.faults().restore();
    }

    private static String message(String token) {
        return message(token, UUID.randomUUID().toString());
    }

    private static String message(String token, String messageId) {
        return SandboxHttp.JSON.writeValueAsString(Map.of("message", Map.of(
                "token", token,
                "notification", Map.of("title", "Hello", "body", "World"),
                "data", Map.of("k", "v", "herald_message_id", messageId),
                "android", Map.of("ttl", "3600s", "priority", "high"))));
    }

    private static String token() {
        return "token-" + UUID.randomUUID();
    }

    private static String errorCode(JsonNode error) {
        for (JsonNode detail : error.path("error").path("details")) {
            if (detail.path("@type").asString("").endsWith("FcmError")) {
                return detail.path("errorCode").asString();
            }
        }
        return null;
    }

    @Test
    void tokenFromGoogleAuthLibraryAllowsAnH2cSendThatIsCounted() {
        String token = token();

        SandboxHttp.Response response = http.fcmSend(accessToken, message(token));

        assertThat(accessToken).startsWith("sandbox-");
        assertThat(response.status()).isEqualTo(200);
        assertThat(response.version()).isEqualTo("HTTP/2.0");
        assertThat(response.json().path("name").asString()).startsWith("projects/herald-sandbox/messages/");
        assertThat(sandbox.counts().received(token).fcm()).isEqualTo(1);
        assertThat(sandbox.counts().received(token).attempts()).isEqualTo(1);
        JsonNode received = http.get("/sandbox/received?token=" + token).json();
        assertThat(received.path("fcm").asLong()).isEqualTo(1);
        assertThat(received.path("apns").asLong()).isZero();
        assertThat(received.path("attempts").asLong()).isEqualTo(1);
        JsonNode stats = http.get("/sandbox/stats").json();
        assertThat(stats.path("requests").asLong()).isEqualTo(1);
        assertThat(stats.path("accepted").asLong()).isEqualTo(1);
        assertThat(stats.path("distinctTokens").asLong()).isEqualTo(1);
    }

    @Test
    void sendOverHttp11IsAcceptedToo() {
        SandboxHttp.Response response = http.fcmSendHttp11(accessToken, message(token()));

        assertThat(response.status()).isEqualTo(200);
        assertThat(response.version()).isEqualTo("HTTP_1_1");
    }

    @Test
    void sendWithoutAccessTokenIsUnauthenticated() {
        SandboxHttp.Response response = http.fcmSend(null, message(token()));

        assertThat(response.status()).isEqualTo(401);
        assertThat(response.json().path("error").path("status").asString()).isEqualTo("UNAUTHENTICATED");
        assertThat(http.get("/sandbox/stats").json().path("rejected").path("UNAUTHENTICATED").asLong()).isEqualTo(1);
    }

    @Test
    void sendWithATokenTheSandboxDidNotIssueIsUnauthenticated() {
        assertThat(http.fcmSend("ya29.not-from-here", message(token())).status()).isEqualTo(401);
    }

    @Test
    void messageWithoutTargetIsInvalidArgument() {
        SandboxHttp.Response response = http.fcmSend(accessToken, "{\"message\":{\"data\":{\"k\":\"v\"}}}");

        assertThat(response.status()).isEqualTo(400);
        assertThat(response.json().path("error").path("status").asString()).isEqualTo("INVALID_ARGUMENT");
        assertThat(errorCode(response.json())).isEqualTo("INVALID_ARGUMENT");
    }

    @Test
    void messageWithTokenAndTopicIsInvalidArgument() {
        SandboxHttp.Response response = http.fcmSend(accessToken, "{\"message\":{\"token\":\"t\",\"topic\":\"news\"}}");

        assertThat(response.status()).isEqualTo(400);
        assertThat(response.json().path("error").path("message").asString()).contains("Oneof field 'target'");
    }

    @Test
    void nonStringDataValueIsInvalidArgumentNamingTheField() {
        String token = token();
        SandboxHttp.Response response = http.fcmSend(accessToken,
                "{\"message\":{\"token\":\"" + token + "\",\"data\":{\"a\":\"x\",\"count\":3}}}");

        assertThat(response.status()).isEqualTo(400);
        assertThat(response.json().path("error").path("message").asString())
                .isEqualTo("Invalid value at 'message.data[1].value' (TYPE_STRING), 3");
        assertThat(response.json().path("error").path("details").toString()).contains("message.data[1].value");
        assertThat(sandbox.counts().received(token).fcm()).isZero();
        assertThat(sandbox.counts().received(token).attempts()).isEqualTo(1);
    }

    @Test
    void payloadOver4096BytesIsInvalidArgument() {
        String big = "x".repeat(4100);
        SandboxHttp.Response response = http.fcmSend(accessToken,
                "{\"message\":{\"token\":\"" + token() + "\",\"data\":{\"big\":\"" + big + "\"}}}");

        assertThat(response.status()).isEqualTo(400);
        assertThat(response.json().path("error").path("message").asString()).isEqualTo("Android message is too big");
    }

    @Test
    void malformedTtlPriorityAndUnknownFieldsAreInvalidArgument() {
        String token = token();
        assertThat(http.fcmSend(accessToken, "{\"message\":{\"token\":\"" + token + "\",\"android\":{\"ttl\":\"3600\"}}}")
                .json().path("error").path("message").asString()).contains("message.android.ttl");
        assertThat(http.fcmSend(accessToken, "{\"message\":{\"token\":\"" + token + "\",\"android\":{\"priority\":\"urgent\"}}}")
                .json().path("error").path("message").asString()).contains("message.android.priority");
        assertThat(http.fcmSend(accessToken, "{\"message\":{\"token\":\"" + token + "\",\"bogus\":1}}")
                .json().path("error").path("message").asString()).contains("Unknown name \"bogus\"");
        assertThat(http.fcmSend(accessToken, "not json").status()).isEqualTo(400);
    }

    @Test
    void validateOnlyChecksWithoutDelivering() {
        String token = token();
        SandboxHttp.Response response = http.fcmSend(accessToken,
                "{\"validate_only\":true,\"message\":{\"token\":\"" + token + "\"}}");

        assertThat(response.status()).isEqualTo(200);
        assertThat(response.json().path("name").asString()).endsWith("/messages/fake_message_id");
        assertThat(sandbox.counts().received(token).fcm()).isZero();
    }

    @Test
    void unregisteredPrefixIsNotFoundUnregistered() {
        SandboxHttp.Response response = http.fcmSend(accessToken, message("unregistered-" + UUID.randomUUID()));

        assertThat(response.status()).isEqualTo(404);
        assertThat(response.json().path("error").path("status").asString()).isEqualTo("NOT_FOUND");
        assertThat(response.json().path("error").path("message").asString()).isEqualTo("Requested entity was not found.");
        assertThat(errorCode(response.json())).isEqualTo("UNREGISTERED");
        assertThat(sandbox.counts().stats().rejected()).containsEntry("UNREGISTERED", 1L);
    }

    @Test
    void badPrefixIsInvalidArgument() {
        SandboxHttp.Response response = http.fcmSend(accessToken, message("bad-" + UUID.randomUUID()));

        assertThat(response.status()).isEqualTo(400);
        assertThat(errorCode(response.json())).isEqualTo("INVALID_ARGUMENT");
    }

    @Test
    void throttledPrefixAnswersQuotaExceededForTheFirstNAttemptsThenAccepts() {
        String token = "throttled2-" + UUID.randomUUID();

        SandboxHttp.Response first = http.fcmSend(accessToken, message(token));
        SandboxHttp.Response second = http.fcmSend(accessToken, message(token));
        SandboxHttp.Response third = http.fcmSend(accessToken, message(token));

        assertThat(first.status()).isEqualTo(429);
        assertThat(first.header("retry-after")).isEqualTo("1");
        assertThat(first.json().path("error").path("status").asString()).isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(errorCode(first.json())).isEqualTo("QUOTA_EXCEEDED");
        assertThat(second.status()).isEqualTo(429);
        assertThat(third.status()).isEqualTo(200);
        assertThat(sandbox.counts().received(token).attempts()).isEqualTo(3);
        assertThat(sandbox.counts().received(token).fcm()).isEqualTo(1);
    }

    @Test
    void flakyPrefixAnswersUnavailableForTheFirstNAttemptsThenAccepts() {
        String token = "flaky1-" + UUID.randomUUID();

        SandboxHttp.Response first = http.fcmSend(accessToken, message(token));
        SandboxHttp.Response second = http.fcmSend(accessToken, message(token));

        assertThat(first.status()).isEqualTo(503);
        assertThat(first.json().path("error").path("status").asString()).isEqualTo("UNAVAILABLE");
        assertThat(errorCode(first.json())).isEqualTo("UNAVAILABLE");
        assertThat(second.status()).isEqualTo(200);
        assertThat(sandbox.counts().received(token).attempts()).isEqualTo(2);
    }

    @Test
    void unregisteredRateOfOneRejectsEveryToken() {
        http.put("/sandbox/faults", "{\"unregisteredRate\":1.0}");

        for (int i = 0; i < 5; i++) {
            assertThat(http.fcmSend(accessToken, message(token())).status()).isEqualTo(404);
        }
        assertThat(sandbox.counts().stats().rejected()).containsEntry("UNREGISTERED", 5L);
        assertThat(sandbox.counts().stats().accepted()).isZero();
    }

    @Test
    void randomTooManyRequestsCarriesTheConfiguredRetryAfter() {
        sandbox.faults().update(new FaultsUpdate(null, null, 1.0, 7L, null));

        SandboxHttp.Response response = http.fcmSend(accessToken, message(token()));

        assertThat(response.status()).isEqualTo(429);
        assertThat(response.header("retry-after")).isEqualTo("7");
    }

    @Test
    void secondDeliveryOfAMessageToATokenCountsAsDuplicate() {
        String token = token();
        String messageId = UUID.randomUUID().toString();

        http.fcmSend(accessToken, message(token, messageId));
        http.fcmSend(accessToken, message(token, messageId));
        http.fcmSend(accessToken, message(token, UUID.randomUUID().toString()));
        http.fcmSend(accessToken, message(token(), messageId));

        JsonNode stats = http.get("/sandbox/stats").json();
        assertThat(stats.path("accepted").asLong()).isEqualTo(4);
        assertThat(stats.path("duplicates").asLong()).isEqualTo(1);
        assertThat(stats.path("distinctTokens").asLong()).isEqualTo(2);
    }

    @Test
    void configuredLatencyDelaysTheAnswer() {
        http.put("/sandbox/faults", "{\"latencyMs\":300}");

        long start = System.nanoTime();
        SandboxHttp.Response accepted = http.fcmSend(accessToken, message(token()));
        long acceptedMs = (System.nanoTime() - start) / 1_000_000;
        start = System.nanoTime();
        SandboxHttp.Response rejected = http.fcmSend(accessToken, message("unregistered-" + UUID.randomUUID()));
        long rejectedMs = (System.nanoTime() - start) / 1_000_000;

        assertThat(accepted.status()).isEqualTo(200);
        assertThat(acceptedMs).isGreaterThanOrEqualTo(300);
        assertThat(rejected.status()).isEqualTo(404);
        assertThat(rejectedMs).isGreaterThanOrEqualTo(300);
    }

    @Test
    void resetForgetsCountsAndAttempts() {
        String token = "throttled1-" + UUID.randomUUID();
        assertThat(http.fcmSend(accessToken, message(token)).status()).isEqualTo(429);

        assertThat(http.post("/sandbox/reset", "application/json", "").status()).isEqualTo(204);

        assertThat(http.get("/sandbox/stats").json().path("requests").asLong()).isZero();
        assertThat(http.fcmSend(accessToken, message(token)).status()).isEqualTo(429);
    }
}
