package dev.herald.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.contract.AudienceJob;
import dev.herald.contract.Channel;
import dev.herald.contract.DeadLetter;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.contract.Throttle;
import dev.herald.gateway.audience.AudienceExpander;
import dev.herald.gateway.consume.AudienceListener;
import dev.herald.gateway.consume.SendListener;
import dev.herald.store.app.ApnsCredential;
import dev.herald.store.app.AppStore;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.status.ExpansionProgress;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.store.status.Outcome;
import dev.herald.sandbox.ProviderSandbox;
import dev.herald.sandbox.faults.FaultsUpdate;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import dev.herald.testsupport.MetricsScrape;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.json.JsonMapper;

/**
 * The gateway against real RabbitMQ and Redis and the provider sandbox: work published to the
 * queues reaches the sandbox, outcomes are recorded, and provider answers are acted on.
 */
@SpringBootTest(properties = {
        "herald.gateway.max-in-flight=16",
        "herald.gateway.retry.max-attempts=3",
        "herald.gateway.retry.initial-backoff=20ms",
        "herald.gateway.retry.max-backoff=100ms",
        "herald.gateway.audience.page-size=500",
        "herald.gateway.audience.batch-size=200"})
@ActiveProfiles("sandbox") // the provider sandbox's token hosts and certificate; its ports are set below
@org.springframework.test.annotation.DirtiesContext // its listeners must not consume another test class's work
class GatewayDeliveryTests {
    private static ProviderSandbox sandbox;

    @Autowired
    AppStore apps;
    @Autowired
    DeviceRegistry devices;
    @Autowired
    MessageStatusStore status;
    @Autowired
    RabbitTemplate rabbit;
    @Autowired
    JsonMapper json;
    @Autowired
    PrometheusMeterRegistry prometheus;
    @Autowired
    RabbitListenerEndpointRegistry listeners;
    @Autowired
    GatewayProperties properties;
    @Autowired
    AudienceExpander expander;
    @Autowired
    ExpansionProgress progress;

    @BeforeAll
    static void startSandbox() {
        sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=20");
    }

    @AfterAll
    static void stopSandbox() {
        sandbox.close();
    }

    /**
     * The gateway's metrics as /actuator/prometheus serves them, and RabbitMQ's, after each test (the
     * last one holds what all of them produced): the charts' dashboards and alerts are checked
     * against these names (scripts/k8s/test-charts.sh).
     */
    @AfterEach
    void keepScrapes() throws IOException {
        MetricsScrape.write("gateway", prometheus.scrape());
        MetricsScrape.write("rabbitmq", LocalRabbit.get().prometheusScrape());
    }

    @DynamicPropertySource
    static void servers(DynamicPropertyRegistry registry) {
        SandboxGateway.servers(registry, () -> sandbox);
    }

    private String newApp() {
        return SandboxGateway.newApp(apps, sandbox, json);
    }

    private PushBatch batch(String appId, String messageId, Priority priority, Instant expiresAt, List<Target> targets) {
        return new PushBatch(messageId, appId, 0, priority, new Notification("Hello", "World", Map.of("k", "v"), Map.of()),
                null, Instant.now(), expiresAt, targets);
    }

    private String publish(PushBatch batch) {
        status.accepted(batch.messageId(), batch.appId(), Optional.of(batch.targets().size()), batch.acceptedAt()).join();
        rabbit.send(Queues.EXCHANGE, Queues.sendQueue(batch.priority()), jsonMessage(batch));
        return batch.messageId();
    }

    private Message jsonMessage(Object body) {
        return SandboxGateway.jsonMessage(json, body);
    }

    private MessageStatus awaitCompleted(String messageId) {
        return SandboxGateway.awaitCompleted(status, messageId);
    }

    /** Registers {@code count} devices subscribed to {@code topic}; returns their tokens. */
    private List<String> subscribers(String appId, String topic, int count, java.util.function.IntFunction<Channel> channel) {
        List<String> tokens = new ArrayList<>();
        IntStream.range(0, count).forEach(i -> {
            String token = topic + "-" + i + "-" + id();
            tokens.add(token);
            devices.register(appId, "d" + i, channel.apply(i), token, List.of(topic)).join();
        });
        return tokens;
    }

    private static String id() {
        return UUID.randomUUID().toString();
    }

    @Test
    void eachLaneHasTheConsumersItsSettingNames() {
        Map<String, Integer> expected = Map.of(SendListener.HIGH, properties.consumers().high(),
                SendListener.NORMAL, properties.consumers().normal(), AudienceListener.ID, properties.consumers().audience());
        expected.forEach((id, consumers) -> await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(((SimpleMessageListenerContainer) listeners.getListenerContainer(id)).getActiveConsumerCount())
                        .as(id).isEqualTo(consumers)));
    }

    @Test
    void deliversToFcmAndApnsAndRecordsEachTargetOnce() {
        String appId = newApp();
        String suffix = id();
        List<Target> targets = List.of(new Target(Channel.fcm, "f1-" + suffix, null), new Target(Channel.fcm, "f2-" + suffix, null),
                new Target(Channel.apns, "a1-" + suffix, null));
        MessageStatus done = awaitCompleted(publish(batch(appId, id(), Priority.normal, Instant.now().plusSeconds(600), targets)));

        assertThat(done.state()).isEqualTo("sent");
        assertThat(done.sent()).isEqualTo(3);
        assertThat(sandbox.counts().received("f1-" + suffix).fcm()).isEqualTo(1);
        assertThat(sandbox.counts().received("f2-" + suffix).fcm()).isEqualTo(1);
        assertThat(sandbox.counts().received("a1-" + suffix).apns()).isEqualTo(1);
        // The app's totals are counted in a second step after the message's (MessageStatusStore).
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(status.stats(appId).join().sent()).isEqualTo(3));
        // Pushy's client metrics, under the gateway's names: the APNs push was written and accepted
        // on an open connection.
        assertThat(prometheus.scrape())
                .containsPattern("herald_gateway_apns_notifications_sent_total\\{[^}]*} [1-9]")
                .containsPattern("herald_gateway_apns_notifications_accepted_total\\{[^}]*} [1-9]")
                .containsPattern("herald_gateway_apns_connections_open\\{[^}]*} [1-9]")
                .contains("herald_gateway_apns_notifications_sent_timer_seconds_count");
    }

    @Test
    void aNotificationAtTheDispatchersSizeLimitStillFitsTheProvidersLimit() {
        String appId = newApp();
        int limit = 4096 - Notification.PLATFORM_RESERVED_BYTES;
        String filler = "";
        Notification largest = null;
        for (int n = 3_000; n < 4_096; n++) {
            Notification candidate = new Notification("T", "B", Map.of("k", "x".repeat(n)), Map.of());
            if (json.writeValueAsBytes(candidate).length > limit) {
                break;
            }
            largest = candidate;
        }
        assertThat(json.writeValueAsBytes(largest)).hasSizeGreaterThan(limit - 2);
        String fcm = "big-fcm-" + id();
        String apns = "big-apns-" + id();
        PushBatch batch = new PushBatch(id(), appId, 0, Priority.normal, largest, null, Instant.now(),
                Instant.now().plusSeconds(600), List.of(new Target(Channel.fcm, fcm, null), new Target(Channel.apns, apns, null)));

        MessageStatus done = awaitCompleted(publish(batch));
        assertThat(done.failures()).isEmpty();
        assertThat(done.sent()).isEqualTo(2);
    }

    @Test
    void deadTokensAreRemovedFromTheRegistryAndCounted() {
        String appId = newApp();
        devices.register(appId, "phone", Channel.fcm, "unregistered-" + id(), List.of("news")).join();
        devices.register(appId, "tablet", Channel.apns, "bad-" + id(), List.of("news")).join();
        List<Target> targets = List.of(devices.find(appId, "phone").join().orElseThrow().target(),
                devices.find(appId, "tablet").join().orElseThrow().target());

        MessageStatus done = awaitCompleted(publish(batch(appId, id(), Priority.normal, Instant.now().plusSeconds(600), targets)));

        assertThat(done.state()).isEqualTo("failed");
        assertThat(done.failures()).containsEntry("UNREGISTERED", 1L).containsEntry("BadDeviceToken", 1L);
        assertThat(done.tokensRemoved()).isEqualTo(2);
        assertThat(devices.find(appId, "phone").join()).isEmpty();
        assertThat(devices.find(appId, "tablet").join()).isEmpty();
        assertThat(status.stats(appId).join().tokensRemoved()).isEqualTo(2);
    }

    @Test
    void throttledAndUnavailableTargetsAreRetriedUntilSent() {
        String appId = newApp();
        String throttled = "throttled1-" + id();
        String flaky = "flaky2-" + id();
        MessageStatus done = awaitCompleted(publish(batch(appId, id(), Priority.normal, Instant.now().plusSeconds(600),
                List.of(new Target(Channel.fcm, throttled, null), new Target(Channel.apns, flaky, null)))));

        assertThat(done.sent()).isEqualTo(2);
        assertThat(sandbox.counts().received(throttled).attempts()).isEqualTo(2);
        assertThat(sandbox.counts().received(flaky).attempts()).isEqualTo(3);
        assertThat(sandbox.counts().received(flaky).apns()).isEqualTo(1);
    }

    @Test
    void targetsThatKeepFailingAreDeadLetteredWithTheirReason() {
        String appId = newApp();
        String token = "flaky99-" + id();
        String messageId = id();
        MessageStatus done = awaitCompleted(publish(batch(appId, messageId, Priority.normal, Instant.now().plusSeconds(600),
                List.of(new Target(Channel.fcm, token, null)))));

        assertThat(done.state()).isEqualTo("failed");
        assertThat(done.failures()).containsEntry("UNAVAILABLE", 1L);
        assertThat(sandbox.counts().received(token).attempts()).isEqualTo(3);
        DeadLetter letter = null;
        for (int i = 0; i < 1000 && letter == null; i++) {
            Message message = rabbit.receive(Queues.DEAD, 5000);
            assertThat(message).as("dead letter for " + messageId).isNotNull();
            DeadLetter candidate = json.readValue(message.getBody(), DeadLetter.class);
            if (candidate.work().messageId().equals(messageId)) {
                letter = candidate;
                assertThat(message.getMessageProperties().<String>getHeader(Queues.REASON_HEADER)).isEqualTo("UNAVAILABLE");
            }
        }
        assertThat(letter.work().targets()).containsExactly(new Target(Channel.fcm, token, null));
        assertThat(letter.attempts()).isEqualTo(3);
    }

    @Test
    void anExpiredMessageIsCountedExpiredAndNotSent() {
        String appId = newApp();
        String token = "late-" + id();
        MessageStatus done = awaitCompleted(publish(batch(appId, id(), Priority.normal, Instant.now().minusSeconds(1),
                List.of(new Target(Channel.fcm, token, null)))));

        assertThat(done.state()).isEqualTo("expired");
        assertThat(sandbox.counts().received(token).attempts()).isZero();
    }

    @Test
    void aRedeliveredBatchDoesNotResendTargetsAlreadyRecorded() {
        String appId = newApp();
        String messageId = id();
        String alreadySent = "done-" + id();
        String pending = "pending-" + id();
        PushBatch batch = batch(appId, messageId, Priority.normal, Instant.now().plusSeconds(600),
                List.of(new Target(Channel.fcm, alreadySent, null), new Target(Channel.fcm, pending, null)));
        status.accepted(messageId, appId, Optional.of(2), batch.acceptedAt()).join();
        // As if an earlier gateway sent the first target and died before acknowledging the batch.
        status.record(messageId, appId, 0, batch.targets().get(0).key(), Outcome.sent()).join();
        rabbit.send(Queues.EXCHANGE, Queues.SEND_NORMAL, jsonMessage(batch));

        MessageStatus done = awaitCompleted(messageId);
        assertThat(done.sent()).isEqualTo(2);
        assertThat(sandbox.counts().received(alreadySent).attempts()).isZero();
        assertThat(sandbox.counts().received(pending).fcm()).isEqualTo(1);
    }

    @Test
    void aTopicAudienceIsExpandedBehindTheQueueAndEveryDeviceReachedOnce() {
        String appId = newApp();
        String topic = "news";
        List<String> tokens = subscribers(appId, topic, 1_100, i -> i % 5 == 0 ? Channel.apns : Channel.fcm);
        AudienceJob job = acceptedTopicSend(appId, topic);
        rabbit.send(Queues.EXCHANGE, Queues.AUDIENCE, jsonMessage(job));

        assertEveryDeviceReachedOnce(job.messageId(), tokens);
    }

    /** A send to the topic, accepted now and expiring in ten minutes, as the dispatcher queues it for expansion. */
    private AudienceJob acceptedTopicSend(String appId, String topic) {
        String messageId = id();
        Instant now = Instant.now();
        status.accepted(messageId, appId, Optional.empty(), now).join();
        return new AudienceJob(messageId, appId, Priority.normal,
                new Notification("T", "B", Map.of(), Map.of()), null, now, now.plusSeconds(600), topic, List.of());
    }

    /** The message completes with every device of its audience (their tokens) sent to exactly once. */
    private void assertEveryDeviceReachedOnce(String messageId, List<String> tokens) {
        MessageStatus done = awaitCompleted(messageId);
        assertThat(done.total()).isEqualTo(tokens.size());
        assertThat(done.sent()).isEqualTo(tokens.size());
        assertThat(tokens).allSatisfy(token -> assertThat(sandbox.counts().received(token).attempts()).isEqualTo(1));
    }

    @Test
    void anExpansionWhoseDeliveryIsStoppedStartsNoFurtherPageAndItsRedeliveryExpandsTheRest() {
        String appId = newApp();
        String topic = "lost";
        List<String> tokens = subscribers(appId, topic, 1_100, i -> Channel.fcm);
        AudienceJob job = acceptedTopicSend(appId, topic);
        String messageId = job.messageId();
        // The stop mark as PendingWork sets it when the delivery's channel is lost while the first of
        // the three pages goes out; PendingWork's cancel is held back until the asserts below.
        AtomicInteger reads = new AtomicInteger();
        CompletableFuture<Void> stopRead = new CompletableFuture<>();
        BooleanSupplier stopped = () -> {
            if (reads.incrementAndGet() == 1) {
                return false;
            }
            stopRead.complete(null);
            return true;
        };

        CompletableFuture<Void> lost = expander.expand(job, stopped).toFuture();
        await().atMost(Duration.ofSeconds(30)).until(() -> stopRead.isDone() || lost.isDone());
        assertThat(lost).as("the stopped expansion, waiting for its cancel").isNotDone();
        assertThat(stopRead).as("the stop mark read before the second page").isDone();
        ExpansionProgress.Step saved = progress.load(messageId).join();
        assertThat(saved.finished()).as("expansion finished although stopped after its first page").isFalse();
        assertThat(saved.nextBatch()).as("batches queued by the first page").isBetween(1, 3);
        lost.cancel(true);

        // RabbitMQ's redelivery of the job, on a channel still open.
        expander.expand(job, () -> false).block(Duration.ofSeconds(30));
        assertEveryDeviceReachedOnce(messageId, tokens);
    }

    @Test
    void aTopicSendSpreadOverMinutesIsThrottledAtTheRateItsAudienceSizeGives() {
        String appId = newApp();
        String topic = "spread";
        List<String> tokens = subscribers(appId, topic, 600, i -> Channel.fcm);
        String messageId = id();
        Instant now = Instant.now();
        status.accepted(messageId, appId, Optional.empty(), now).join();
        // 600 devices over one minute: 600 a minute, a burst of 10. It expires after 4 s, long
        // before the minute is over: what was not sent by then is counted expired.
        rabbit.send(Queues.EXCHANGE, Queues.AUDIENCE, jsonMessage(new AudienceJob(messageId, appId, Priority.normal,
                new Notification("T", "B", Map.of(), Map.of()), null, now, now.plusSeconds(4), topic, List.of(),
                new Throttle(null, 1))));

        MessageStatus done = awaitCompleted(messageId);
        long elapsedSeconds = Duration.between(now, Instant.now()).toSeconds() + 1;
        assertThat(done.sent()).isBetween(10L, 10 + 10 * Math.min(elapsedSeconds, 5));
        assertThat(done.sent() + done.expired()).isEqualTo(600);
        assertThat(tokens.stream().mapToLong(token -> sandbox.counts().received(token).fcm()).sum()).isEqualTo(done.sent());
    }

    @Test
    void aHighPriorityPushOvertakesABulkBacklog() {
        // Every target of a consumed batch waits for one of the 16 in-flight permits at once. Were
        // the permits handed out first come, first served, the urgent target would queue behind all
        // of the first bulk batch and finish after it. With 50 ms per provider answer that batch
        // needs at least 500 / 16 * 50 ms = 1.6 s however fast the machine, so the comparison of
        // completion times below does not depend on how quickly this machine drains the backlog.
        sandbox.faults().update(new FaultsUpdate(50L, null, null, null, null));
        try {
            String appId = newApp();
            List<Target> bulk = IntStream.range(0, 1_500).mapToObj(i -> new Target(Channel.fcm, "bulk-" + i + "-" + id(), null)).toList();
            List<String> bulkIds = new ArrayList<>();
            for (int i = 0; i < bulk.size(); i += 500) {
                bulkIds.add(publish(batch(appId, id(), Priority.normal, Instant.now().plusSeconds(600), bulk.subList(i, i + 500))));
            }
            await().pollInterval(Duration.ofMillis(10)).atMost(Duration.ofSeconds(30))
                    .until(() -> status.find(bulkIds.get(0)).join().orElseThrow().sent() > 0);
            String urgent = publish(batch(appId, id(), Priority.high, Instant.now().plusSeconds(600),
                    List.of(new Target(Channel.fcm, "urgent-" + id(), null))));

            MessageStatus urgentDone = awaitCompleted(urgent);
            List<MessageStatus> bulkDone = bulkIds.stream().map(this::awaitCompleted).toList();
            assertThat(urgentDone.sent()).isEqualTo(1);
            assertThat(bulkDone).allSatisfy(done -> assertThat(done.sent()).isEqualTo(500));
            assertThat(urgentDone.completedAt())
                    .as("the urgent push, sent while the first bulk batch was being delivered, finished before that batch")
                    .isBefore(bulkDone.get(0).completedAt());
        } finally {
            sandbox.faults().restore();
        }
    }

    @Test
    void anUnreadableMessageGoesToTheDeadLetterQueueAndTheGatewayCarriesOn() {
        rabbit.send(Queues.EXCHANGE, Queues.SEND_NORMAL, new Message("{not json".getBytes(), new MessageProperties()));
        boolean found = false;
        for (int i = 0; i < 1000 && !found; i++) {
            Message message = rabbit.receive(Queues.DEAD, 5000);
            assertThat(message).isNotNull();
            found = new String(message.getBody()).equals("{not json");
        }
        assertThat(found).isTrue();
        deliversToFcmAndApnsAndRecordsEachTargetOnce();
    }
}
