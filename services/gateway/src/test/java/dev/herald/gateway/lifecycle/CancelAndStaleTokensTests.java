package dev.herald.gateway.lifecycle;

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
import dev.herald.sandbox.faults.FaultsUpdate;
import dev.herald.store.app.AppStore;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.status.Cancellation;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.json.JsonMapper;

/**
 * Cancel and the token lifecycle on the gateway, against real RabbitMQ and Redis and the provider
 * sandbox. Time is the context's {@link Clock} bean, which the tests move forward instead of sleeping.
 */
@SpringBootTest(properties = {
        "herald.gateway.max-in-flight=16",
        "herald.gateway.retry.max-attempts=3",
        "herald.gateway.retry.initial-backoff=20ms",
        "herald.gateway.retry.max-backoff=100ms",
        "herald.gateway.audience.page-size=500",
        "herald.gateway.audience.batch-size=100",
        "herald.gateway.token-sweep.interval=300ms"})
@ActiveProfiles("sandbox")
@Import(CancelAndStaleTokensTests.MovableClock.class)
@DirtiesContext // its listeners must not consume another test class's work
class CancelAndStaleTokensTests {
    private static ProviderSandbox sandbox;

    /** The application's clock: the system clock plus an offset the test moves. */
    @TestConfiguration(proxyBeanMethods = false)
    static class MovableClock extends Clock {
        private volatile Duration offset = Duration.ZERO;

        @Bean
        @Primary
        MovableClock movableClock() {
            return this;
        }

        void advance(Duration by) {
            offset = offset.plus(by);
        }

        void reset() {
            offset = Duration.ZERO;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Instant instant() {
            return Instant.now().plus(offset);
        }
    }

    @Autowired
    MovableClock clock;
    @Autowired
    AppStore apps;
    @Autowired
    DeviceRegistry devices;
    @Autowired
    MessageStatusStore status;
    @Autowired
    MessageCancels cancels;
    @Autowired
    RabbitTemplate rabbit;
    @Autowired
    JsonMapper json;

    @BeforeAll
    static void startSandbox() {
        sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=20");
    }

    @AfterAll
    static void stopSandbox() {
        sandbox.close();
    }

    @AfterEach
    void restore() {
        clock.reset();
        sandbox.faults().restore();
    }

    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        SandboxGateway.servers(registry, () -> sandbox);
    }

    private String newApp() {
        return SandboxGateway.newApp(apps, sandbox, json);
    }

    private Message jsonMessage(Object body) {
        return SandboxGateway.jsonMessage(json, body);
    }

    /** A topic send as the dispatcher queues it: status first, then the audience job. */
    private String sendToTopic(String appId, String topic) {
        String messageId = UUID.randomUUID().toString();
        Instant now = clock.instant();
        status.accepted(messageId, appId, Optional.empty(), now).join();
        rabbit.send(Queues.EXCHANGE, Queues.AUDIENCE, jsonMessage(new AudienceJob(messageId, appId, Priority.normal,
                new Notification("T", "B", Map.of(), Map.of()), null, now, now.plusSeconds(600), topic, List.of())));
        return messageId;
    }

    private MessageStatus awaitCompleted(String messageId) {
        return SandboxGateway.awaitCompleted(status, messageId);
    }

    @Test
    void cancelMidFanOutLeavesEveryTargetSentOrCancelledAndTheCountsAddUp() {
        // 16 requests in flight at 40 ms each: about 400 per second, so the 3,000 take ~8 s and the
        // cancel lands mid-way whatever this machine's speed (it waits for the first 300 sends).
        sandbox.faults().update(new FaultsUpdate(40L, null, null, null, null));
        String appId = newApp();
        List<String> tokens = new ArrayList<>();
        for (int i = 0; i < 3_000; i++) {
            String token = "cancel-" + i + "-" + UUID.randomUUID();
            tokens.add(token);
            devices.register(appId, "d" + i, i % 4 == 0 ? Channel.apns : Channel.fcm, token, List.of("sale")).join();
        }
        String messageId = sendToTopic(appId, "sale");
        await().pollInterval(Duration.ofMillis(20)).atMost(Duration.ofSeconds(60))
                .until(() -> status.find(messageId).join().orElseThrow().sent() >= 300);

        assertThat(cancels.cancel(messageId, appId).join()).isEqualTo(Cancellation.MARKED);
        MessageStatus done = awaitCompleted(messageId);

        long accepted = tokens.stream().mapToLong(token -> {
            var received = sandbox.counts().received(token);
            assertThat(received.fcm() + received.apns()).as("deliveries of " + token).isLessThanOrEqualTo(1);
            return received.fcm() + received.apns();
        }).sum();
        System.out.printf("cancel mid-fan-out: total %d, sent %d (sandbox accepted %d), cancelled %d%n",
                done.total(), done.sent(), accepted, done.cancelled());
        assertThat(done.state()).isEqualTo("cancelled");
        assertThat(done.sent()).as("sent, as the sandbox counted it").isEqualTo(accepted).isGreaterThanOrEqualTo(300);
        assertThat(done.cancelled()).isPositive();
        assertThat(done.sent() + done.cancelled()).as("every target either sent or cancelled").isEqualTo(done.total());
        assertThat(done.failed() + done.expired()).isZero();
        assertThat(done.total()).isLessThanOrEqualTo(tokens.size());
        assertThat(status.stats(appId).join().cancelled()).isEqualTo(done.cancelled());
    }

    @Test
    void aQueuedMessageCancelledBeforeTheGatewayTookItSendsNothing() {
        String appId = newApp();
        String messageId = UUID.randomUUID().toString();
        List<Target> targets = List.of(new Target(Channel.fcm, "queued-1-" + messageId, null),
                new Target(Channel.apns, "queued-2-" + messageId, null));
        Instant now = clock.instant();
        PushBatch batch = new PushBatch(messageId, appId, 0, Priority.normal, new Notification("T", "B", Map.of(), Map.of()),
                null, now, now.plusSeconds(600), targets);
        status.accepted(messageId, appId, Optional.of(2), now).join();
        assertThat(cancels.cancel(messageId, appId).join()).isEqualTo(Cancellation.MARKED);
        rabbit.send(Queues.EXCHANGE, Queues.SEND_NORMAL, jsonMessage(batch));

        MessageStatus done = awaitCompleted(messageId);
        assertThat(done.state()).isEqualTo("cancelled");
        assertThat(done.cancelled()).isEqualTo(2);
        assertThat(done.sent()).isZero();
        targets.forEach(target -> assertThat(sandbox.counts().received(target.token()).attempts()).isZero());
        assertThat(cancels.cancel(messageId, appId).join()).as("cancelled and complete").isEqualTo(Cancellation.ALREADY_CANCELLED);
    }

    @Test
    void aTargetWaitingToBeRetriedWhenTheMessageIsCancelledEndsCancelledNotSent() {
        // Every request answered 429 with Retry-After 3 s: the app is paused and the target parked on
        // herald.parked; while it waits there the message is cancelled.
        sandbox.faults().update(new FaultsUpdate(null, null, 1.0, 3L, null));
        String appId = newApp();
        String messageId = UUID.randomUUID().toString();
        String token = "retried-" + messageId;
        Instant now = clock.instant();
        status.accepted(messageId, appId, Optional.of(1), now).join();
        rabbit.send(Queues.EXCHANGE, Queues.SEND_NORMAL, jsonMessage(new PushBatch(messageId, appId, 0, Priority.normal,
                new Notification("T", "B", Map.of(), Map.of()), null, now, now.plusSeconds(600),
                List.of(new Target(Channel.fcm, token, null)))));
        await().pollInterval(Duration.ofMillis(20)).atMost(Duration.ofSeconds(30))
                .until(() -> sandbox.counts().received(token).attempts() == 1);

        assertThat(cancels.cancel(messageId, appId).join()).isEqualTo(Cancellation.MARKED);
        MessageStatus done = awaitCompleted(messageId);
        assertThat(done.state()).isEqualTo("cancelled");
        assertThat(done.cancelled()).isEqualTo(1);
        assertThat(done.sent() + done.failed()).isZero();
        assertThat(sandbox.counts().received(token).attempts()).as("no attempt after the cancel").isEqualTo(1);
    }

    @Test
    void aFinishedMessageCannotBeCancelled() {
        String appId = newApp();
        String messageId = sendToTopic(appId, "nobody-follows-this");
        MessageStatus done = awaitCompleted(messageId);
        assertThat(done.state()).isEqualTo("failed"); // an empty audience
        assertThat(cancels.cancel(messageId, appId).join()).isEqualTo(Cancellation.FINISHED);
    }

    @Test
    void staleTokensAreLeftOutOfFanOutsThenSweptAway() {
        // APNs only: FCM's OAuth assertion carries the clock's time, which the sandbox checks against its own.
        String appId = newApp();
        devices.register(appId, "old", Channel.apns, "stale-old-" + appId, List.of("news")).join();
        clock.advance(Duration.ofDays(20));
        devices.register(appId, "young", Channel.apns, "stale-young-" + appId, List.of("news")).join();
        devices.register(appId, "refreshed", Channel.apns, "stale-refreshed-" + appId, List.of("news")).join();
        clock.advance(Duration.ofDays(11)); // old: 31 days without a refresh, the others 11

        MessageStatus first = awaitCompleted(sendToTopic(appId, "news"));
        assertThat(first.total()).isEqualTo(2);
        assertThat(first.sent()).isEqualTo(2);
        assertThat(sandbox.counts().received("stale-old-" + appId).attempts()).isZero();
        assertThat(status.stats(appId).join().staleTokensSkipped()).isEqualTo(1);
        assertThat(devices.find(appId, "old").join().orElseThrow().stale()).isTrue();

        clock.advance(Duration.ofDays(240)); // old: 271 days, young: 251
        devices.register(appId, "refreshed", Channel.apns, "stale-refreshed-" + appId, List.of("news")).join();
        await().atMost(Duration.ofSeconds(30)).until(() -> devices.find(appId, "old").join().isEmpty());

        assertThat(status.stats(appId).join().staleTokensRemoved()).isEqualTo(1);
        assertThat(devices.find(appId, "young").join().orElseThrow().stale()).isTrue();
        MessageStatus second = awaitCompleted(sendToTopic(appId, "news"));
        assertThat(second.total()).as("only the device that registered again").isEqualTo(1);
        assertThat(sandbox.counts().received("stale-refreshed-" + appId).apns()).isEqualTo(2);
    }
}
