package dev.herald.gateway.webpush;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.contract.AudienceJob;
import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.gateway.SandboxGateway;
import dev.herald.sandbox.ProviderSandbox;
import dev.herald.sandbox.webpush.TestSubscriptions;
import dev.herald.store.app.AppStore;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.store.status.Outcome;
import dev.herald.store.webpush.WebPushCredential;
import dev.herald.store.webpush.WebPushSubscription;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Web Push end to end through the gateway: real RabbitMQ and Redis, and the provider sandbox's push
 * service, which decrypts what arrives and checks every VAPID token.
 */
@SpringBootTest(properties = {
        "herald.gateway.retry.max-attempts=3",
        "herald.gateway.retry.initial-backoff=20ms",
        "herald.gateway.retry.max-backoff=100ms"})
@ActiveProfiles("sandbox")
@DirtiesContext // its listeners must not consume another test class's work
class WebPushDeliveryTests {
    private static ProviderSandbox sandbox;

    @Autowired
    AppStore apps;
    @Autowired
    DeviceRegistry devices;
    @Autowired
    MessageStatusStore status;
    @Autowired
    MqttOutbox outbox;
    @Autowired
    RabbitTemplate rabbit;
    @Autowired
    JsonMapper json;

    @BeforeAll
    static void startSandbox() {
        sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=5");
    }

    @AfterAll
    static void stopSandbox() {
        sandbox.close();
    }

    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        SandboxGateway.servers(registry, () -> sandbox);
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    /** A subscription the sandbox issued for the app's VAPID key, as the browser would hold it. */
    private TestSubscriptions.Subscription subscribe(String appId, String name) {
        String applicationServerKey = apps.load(appId).join().orElseThrow().webpush().orElseThrow().publicKey();
        return sandbox.webPush().issue(List.of(name + id()), applicationServerKey).getFirst();
    }

    private static Target target(TestSubscriptions.Subscription subscription) {
        return new Target(Channel.webpush, token(subscription), null);
    }

    private static String token(TestSubscriptions.Subscription subscription) {
        return new WebPushSubscription(URI.create(subscription.endpoint()), subscription.p256dh(), subscription.auth()).token();
    }

    private String publish(String appId, Notification notification, List<Target> targets) {
        PushBatch batch = new PushBatch(id(), appId, 0, Priority.high, notification, "score", Instant.now(),
                Instant.now().plusSeconds(600), targets);
        status.accepted(batch.messageId(), appId, Optional.of(targets.size()), batch.acceptedAt()).join();
        rabbit.send(Queues.EXCHANGE, Queues.sendQueue(batch.priority()), SandboxGateway.jsonMessage(json, batch));
        return batch.messageId();
    }

    private MessageStatus awaitCompleted(String messageId) {
        return SandboxGateway.awaitCompleted(status, messageId);
    }

    @Test
    void aTopicSendReachesFcmApnsMqttAndWebPushDevicesWithOneStatus() {
        String appId = SandboxGateway.newApp(apps, sandbox, json);
        String fcm = "fcm-" + id();
        String apns = "apns-" + id();
        TestSubscriptions.Subscription browser = subscribe(appId, "browser-");
        devices.register(appId, "phone", Channel.fcm, fcm, List.of("scores")).join();
        devices.register(appId, "tablet", Channel.apns, apns, List.of("scores")).join();
        devices.register(appId, "car", Channel.mqtt, "car", List.of("scores")).join();
        devices.register(appId, "laptop", Channel.webpush, token(browser), List.of("scores")).join();
        String messageId = id();
        Instant now = Instant.now();
        status.accepted(messageId, appId, Optional.empty(), now).join();
        rabbit.send(Queues.EXCHANGE, Queues.AUDIENCE, SandboxGateway.jsonMessage(json, new AudienceJob(messageId, appId, Priority.normal,
                new Notification("Goal", "2-1", Map.of(), Map.of()), null, now, now.plusSeconds(600), "scores", List.of())));

        // The MQTT device's connection manager acknowledges on the device's PUBACK; here the test is that device.
        await().atMost(Duration.ofSeconds(60)).until(() -> outbox.read(appId, "car").join().stream()
                .anyMatch(entry -> entry.messageId().equals(messageId)));
        outbox.settle(appId, "car", messageId, Outcome.delivered()).join();

        MessageStatus done = awaitCompleted(messageId);
        assertThat(done.state()).isEqualTo("sent");
        assertThat(done.total()).isEqualTo(4);
        assertThat(done.sent()).isEqualTo(3);
        assertThat(done.delivered()).isEqualTo(1);
        assertThat(sandbox.counts().received(fcm).fcm()).isEqualTo(1);
        assertThat(sandbox.counts().received(apns).apns()).isEqualTo(1);
        assertThat(sandbox.counts().received(browser.name()).webpush()).isEqualTo(1);
    }

    @Test
    void theSandboxDecryptsExactlyThePayloadSent() {
        String appId = SandboxGateway.newApp(apps, sandbox, json);
        TestSubscriptions.Subscription browser = subscribe(appId, "reader-");
        Notification notification = new Notification("Héllo", "Wörld", Map.of("article", "42"),
                Map.of("webpush", Map.of("icon", "/icon.png", "data", Map.of("url", "/news/42"))));

        String messageId = publish(appId, notification, List.of(target(browser)));

        assertThat(awaitCompleted(messageId).sent()).isEqualTo(1);
        JsonNode received = json.readTree(sandbox.webPush().lastPayload(browser.name()));
        JsonNode expected = json.readTree("{\"title\":\"Héllo\",\"body\":\"Wörld\",\"data\":{\"article\":\"42\",\"herald_message_id\":\""
                + messageId + "\",\"url\":\"/news/42\"},\"icon\":\"/icon.png\"}");
        assertThat(received).isEqualTo(expected);
    }

    @Test
    void aGoneSubscriptionIsRemovedFromTheRegistry() {
        String appId = SandboxGateway.newApp(apps, sandbox, json);
        TestSubscriptions.Subscription gone = subscribe(appId, "unregistered-");
        devices.register(appId, "old-laptop", Channel.webpush, token(gone), List.of("news")).join();

        MessageStatus done = awaitCompleted(publish(appId, new Notification("t", "b", Map.of(), Map.of()),
                List.of(devices.find(appId, "old-laptop").join().orElseThrow().target())));

        assertThat(done.state()).isEqualTo("failed");
        assertThat(done.failures()).containsEntry("GONE", 1L);
        assertThat(done.tokensRemoved()).isEqualTo(1);
        assertThat(devices.find(appId, "old-laptop").join()).isEmpty();
    }

    @Test
    void aPushSignedWithTheWrongKeyIsRefusedByTheSandboxAndNotRetried() {
        String appId = SandboxGateway.newApp(apps, sandbox, json);
        TestSubscriptions.Subscription browser = sandbox.webPush().issue(List.of("forged-" + id()), null).getFirst();
        WebPushCredential signing = WebPushCredential.generate(null);
        WebPushCredential named = WebPushCredential.generate(null);
        // The stored pair does not belong together: the JWT is signed by one key and names another.
        apps.setWebPush(appId, new WebPushCredential(signing.privateKey(), named.publicKey(), null)).join();

        MessageStatus done = awaitCompleted(publish(appId, new Notification("t", "b", Map.of(), Map.of()), List.of(target(browser))));

        assertThat(done.failures()).containsEntry("VAPID_REJECTED", 1L);
        assertThat(sandbox.counts().stats().rejected()).containsKey("VAPID_SIGNATURE");
        assertThat(sandbox.counts().received(browser.name()).webpush()).isZero();
        assertThat(sandbox.webPush().lastPayload(browser.name())).isNull();
    }

    @Test
    void throttledAndUnavailablePushServicesAreRetriedUntilAccepted() {
        String appId = SandboxGateway.newApp(apps, sandbox, json);
        TestSubscriptions.Subscription throttled = subscribe(appId, "throttled1-");
        TestSubscriptions.Subscription flaky = subscribe(appId, "flaky2-");

        MessageStatus done = awaitCompleted(publish(appId, new Notification("t", "b", Map.of(), Map.of()),
                List.of(target(throttled), target(flaky))));

        assertThat(done.sent()).isEqualTo(2);
        assertThat(sandbox.counts().received(throttled.name()).attempts()).isEqualTo(2);
        assertThat(sandbox.counts().received(flaky.name()).attempts()).isEqualTo(3);
    }

    @Test
    void aPayloadOverFourKilobytesAfterEncryptionIsNotSent() {
        String appId = SandboxGateway.newApp(apps, sandbox, json);
        TestSubscriptions.Subscription browser = subscribe(appId, "big-");

        MessageStatus done = awaitCompleted(publish(appId, new Notification("t", "x".repeat(4000), Map.of(), Map.of()),
                List.of(target(browser))));

        assertThat(done.failures()).containsEntry("PAYLOAD_TOO_LARGE", 1L);
        assertThat(sandbox.counts().received(browser.name()).attempts()).isZero();
    }
}
