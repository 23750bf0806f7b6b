package dev.herald.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.eatthepath.pushy.apns.ApnsClient;
import com.eatthepath.pushy.apns.ApnsClientBuilder;
import com.eatthepath.pushy.apns.DeliveryPriority;
import com.eatthepath.pushy.apns.PushNotificationResponse;
import com.eatthepath.pushy.apns.PushType;
import com.eatthepath.pushy.apns.auth.ApnsSigningKey;
import com.eatthepath.pushy.apns.util.SimpleApnsPushNotification;
import dev.herald.sandbox.faults.FaultsUpdate;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import tools.jackson.databind.JsonNode;

/** APNs against a running sandbox, through Pushy's real ApnsClient with token authentication. */
class ApnsTests {
    private static final String TOPIC = "dev.herald.demo";
    private static ProviderSandbox sandbox;
    private static ApnsClient apns;
    private static HttpClient raw;

    @BeforeAll
    static void start() throws Exception {
        sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=0");
        Map<String, Object> demo = sandbox.demoApns();
        ApnsSigningKey key = ApnsSigningKey.loadFromInputStream(
                new ByteArrayInputStream(((String) demo.get("p8")).getBytes(StandardCharsets.US_ASCII)),
                (String) demo.get("teamId"), (String) demo.get("keyId"));
        apns = new ApnsClientBuilder()
                .setApnsServer("127.0.0.1", sandbox.apnsPort())
                .setTrustedServerCertificateChain(sandbox.apnsCertificate().toFile())
                .setSigningKey(key)
                .build();
        raw = HttpClient.create().protocol(HttpProtocol.H2)
                .secure(spec -> spec.sslContext(Http2SslContextSpec.forClient()
                        .configure(builder -> builder.trustManager(sandbox.apnsCertificate().toFile()))))
                .baseUrl(sandbox.apnsEndpoint().toString());
    }

    @AfterAll
    static void stop() throws Exception {
        apns.close().get(10, TimeUnit.SECONDS);
        sandbox.close();
    }

    @BeforeEach
    void clean() {
        sandbox.counts().reset();
        sandbox.faults().restore();
    }

    private static PushNotificationResponse<SimpleApnsPushNotification> push(String token) throws Exception {
        return push(token, "{\"aps\":{\"alert\":{\"title\":\"Hello\"}},\"herald_message_id\":\"" + UUID.randomUUID() + "\"}");
    }

    private static PushNotificationResponse<SimpleApnsPushNotification> push(String token, String payload) throws Exception {
        return apns.sendNotification(new SimpleApnsPushNotification(token, TOPIC, payload,
                Instant.now().plus(Duration.ofHours(1)), DeliveryPriority.IMMEDIATE, PushType.ALERT)).get(20, TimeUnit.SECONDS);
    }

    private record RawAnswer(int status, String apnsId, String body) {
    }

    /** One request with exactly the given headers, for what Pushy would never send. */
    private static RawAnswer rawPush(String token, Map<String, String> headers, String payload) {
        return raw.headers(h -> headers.forEach(h::set))
                .post().uri("/3/device/" + token)
                .send(ByteBufFlux.fromString(Mono.just(payload)))
                .responseSingle((response, body) -> body.asString().defaultIfEmpty("").map(text ->
                        new RawAnswer(response.status().code(), response.responseHeaders().get("apns-id"), text)))
                .block(Duration.ofSeconds(20));
    }

    private static String bearer() {
        String header = "{\"alg\":\"ES256\",\"kid\":\"SANDBOXKEY\"}";
        String claims = "{\"iss\":\"SANDBOXTM1\",\"iat\":" + Instant.now().getEpochSecond() + "}";
        java.util.Base64.Encoder encoder = java.util.Base64.getUrlEncoder().withoutPadding();
        return "bearer " + encoder.encodeToString(header.getBytes()) + "." + encoder.encodeToString(claims.getBytes())
                + "." + encoder.encodeToString(new byte[64]);
    }

    @Test
    void acceptedPushIsCountedForTheToken() throws Exception {
        String token = "device-" + UUID.randomUUID();

        PushNotificationResponse<SimpleApnsPushNotification> response = push(token);

        assertThat(response.isAccepted()).isTrue();
        assertThat(response.getStatusCode()).isEqualTo(200);
        assertThat(response.getApnsId()).isNotNull();
        assertThat(sandbox.counts().received(token).apns()).isEqualTo(1);
        assertThat(sandbox.counts().received(token).fcm()).isZero();
    }

    @Test
    void apnsIdSentIsEchoedBack() throws Exception {
        UUID apnsId = UUID.randomUUID();

        PushNotificationResponse<SimpleApnsPushNotification> response = apns.sendNotification(
                new SimpleApnsPushNotification("device-" + UUID.randomUUID(), TOPIC, "{\"aps\":{}}", null,
                        DeliveryPriority.CONSERVE_POWER, PushType.BACKGROUND, null, apnsId)).get(20, TimeUnit.SECONDS);

        assertThat(response.isAccepted()).isTrue();
        assertThat(response.getApnsId()).isEqualTo(apnsId);
    }

    @Test
    void unregisteredPrefixIsRejectedWith410AndTimestamp() throws Exception {
        long before = System.currentTimeMillis();

        PushNotificationResponse<SimpleApnsPushNotification> response = push("unregistered-" + UUID.randomUUID());

        assertThat(response.isAccepted()).isFalse();
        assertThat(response.getStatusCode()).isEqualTo(410);
        assertThat(response.getRejectionReason()).contains("Unregistered");
        assertThat(response.getTokenInvalidationTimestamp()).hasValueSatisfying(
                timestamp -> assertThat(timestamp.toEpochMilli()).isGreaterThanOrEqualTo(before));
        assertThat(sandbox.counts().stats().rejected()).containsEntry("Unregistered", 1L);
    }

    @Test
    void badPrefixIsRejectedAsBadDeviceToken() throws Exception {
        PushNotificationResponse<SimpleApnsPushNotification> response = push("bad-" + UUID.randomUUID());

        assertThat(response.getStatusCode()).isEqualTo(400);
        assertThat(response.getRejectionReason()).contains("BadDeviceToken");
        assertThat(response.getTokenInvalidationTimestamp()).isEmpty();
    }

    @Test
    void throttledAndFlakyPrefixesRejectTheFirstAttemptsThenAccept() throws Exception {
        String throttled = "throttled1-" + UUID.randomUUID();
        String flaky = "flaky2-" + UUID.randomUUID();

        assertThat(push(throttled).getRejectionReason()).contains("TooManyRequests");
        assertThat(push(throttled).isAccepted()).isTrue();
        assertThat(push(flaky).getStatusCode()).isEqualTo(503);
        assertThat(push(flaky).getRejectionReason()).contains("ServiceUnavailable");
        assertThat(push(flaky).isAccepted()).isTrue();
        assertThat(sandbox.counts().received(throttled).attempts()).isEqualTo(2);
        assertThat(sandbox.counts().received(flaky).attempts()).isEqualTo(3);
        assertThat(sandbox.counts().received(flaky).apns()).isEqualTo(1);
    }

    @Test
    void unregisteredRateOfOneRejectsEveryToken() throws Exception {
        sandbox.faults().update(new FaultsUpdate(null, 1.0, null, null, null));

        assertThat(push("device-" + UUID.randomUUID()).getStatusCode()).isEqualTo(410);
    }

    @Test
    void collapseIdOver64BytesIsBadCollapseId() throws Exception {
        PushNotificationResponse<SimpleApnsPushNotification> response = apns.sendNotification(
                new SimpleApnsPushNotification("device-" + UUID.randomUUID(), TOPIC, "{\"aps\":{}}", null,
                        DeliveryPriority.IMMEDIATE, PushType.ALERT, "c".repeat(65))).get(20, TimeUnit.SECONDS);

        assertThat(response.getRejectionReason()).contains("BadCollapseId");
    }

    @Test
    void payloadOver4096BytesIsPayloadTooLarge() throws Exception {
        PushNotificationResponse<SimpleApnsPushNotification> response =
                push("device-" + UUID.randomUUID(), "{\"aps\":{},\"big\":\"" + "x".repeat(4100) + "\"}");

        assertThat(response.getStatusCode()).isEqualTo(413);
        assertThat(response.getRejectionReason()).contains("PayloadTooLarge");
    }

    @Test
    void payloadThatIsNotJsonWithApsIsRejected() throws Exception {
        assertThat(push("device-" + UUID.randomUUID(), "not json").getRejectionReason()).contains("BadPayload");
        assertThat(push("device-" + UUID.randomUUID(), "{\"alert\":\"hi\"}").getRejectionReason()).contains("BadPayload");
    }

    @Test
    void secondDeliveryOfAMessageToATokenCountsAsDuplicate() throws Exception {
        String token = "device-" + UUID.randomUUID();
        String payload = "{\"aps\":{},\"herald_message_id\":\"m-1\"}";

        push(token, payload);
        push(token, payload);

        assertThat(sandbox.counts().stats().duplicates()).isEqualTo(1);
        assertThat(sandbox.counts().received(token).apns()).isEqualTo(2);
    }

    @Test
    void missingProviderTokenIsForbidden() {
        RawAnswer answer = rawPush("device-1", Map.of("apns-topic", TOPIC), "{\"aps\":{}}");

        assertThat(answer.status()).isEqualTo(403);
        assertThat(answer.body()).isEqualTo("{\"reason\":\"MissingProviderToken\"}");
        assertThat(answer.apnsId()).isNotBlank();
    }

    @Test
    void malformedProviderTokenIsInvalidProviderToken() {
        RawAnswer answer = rawPush("device-1", Map.of("authorization", "bearer not-a-jwt", "apns-topic", TOPIC),
                "{\"aps\":{}}");

        assertThat(answer.status()).isEqualTo(403);
        assertThat(answer.body()).contains("InvalidProviderToken");
    }

    @Test
    void missingTopicAndBadPriorityAreBadRequests() {
        JsonNode missingTopic = SandboxHttp.JSON.readTree(
                rawPush("device-1", Map.of("authorization", bearer()), "{\"aps\":{}}").body());
        RawAnswer badPriority = rawPush("device-1",
                Map.of("authorization", bearer(), "apns-topic", TOPIC, "apns-priority", "7"), "{\"aps\":{}}");

        assertThat(missingTopic.path("reason").asString()).isEqualTo("MissingTopic");
        assertThat(badPriority.status()).isEqualTo(400);
        assertThat(badPriority.body()).contains("BadPriority");
    }

    @Test
    void configuredLatencyDelaysTheAnswer() throws Exception {
        sandbox.faults().update(new FaultsUpdate(250L, null, null, null, null));
        push("device-warm-up"); // the first push also opens the connection; time the second

        long start = System.nanoTime();
        PushNotificationResponse<SimpleApnsPushNotification> response = push("device-" + UUID.randomUUID());
        long elapsedMs = (System.nanoTime() - start) / 1_000_000;

        assertThat(response.isAccepted()).isTrue();
        assertThat(elapsedMs).isGreaterThanOrEqualTo(250);
    }
}
