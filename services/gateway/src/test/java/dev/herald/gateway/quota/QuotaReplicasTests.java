package dev.herald.gateway.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.gateway.GatewayApplication;
import dev.herald.sandbox.ProviderSandbox;
import dev.herald.sandbox.faults.FaultsUpdate;
import dev.herald.store.app.AppLimits;
import dev.herald.store.app.AppStore;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import dev.herald.testsupport.SettableClock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import tools.jackson.databind.json.JsonMapper;

/**
 * Three gateway replicas (three application contexts in this JVM) against real RabbitMQ and Redis
 * and the provider sandbox, sharing one settable clock: the buckets in Redis refill only when the
 * test moves time, so what may have passed at each step is known exactly, and nothing here sleeps
 * to let time pass. What the sandbox accepted is compared with that.
 */
class QuotaReplicasTests {
    private static final String CRYPTO_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    private static final int REPLICAS = 3;
    private static final int MAX_IN_FLIGHT = 8;
    private static final int BATCH = 50;

    private static final SettableClock clock = new SettableClock(Instant.now());
    private static final List<ConfigurableApplicationContext> replicas = new ArrayList<>();
    private static ProviderSandbox sandbox;
    private static AppStore apps;
    private static MessageStatusStore status;
    private static RabbitTemplate rabbit;
    private static JsonMapper json;

    /** Each test has apps of its own, so their buckets are apart while the replicas and the clock are shared. */
    @BeforeAll
    static void startReplicas() {
        sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=20");
        for (int i = 0; i < REPLICAS; i++) {
            replicas.add(new SpringApplicationBuilder(GatewayApplication.class)
                    .profiles("sandbox")
                    .initializers(context -> ((GenericApplicationContext) context).registerBean("clock", Clock.class, () -> clock))
                    .run("--server.port=0",
                            "--spring.rabbitmq.port=" + LocalRabbit.get().port(),
                            "--herald.redis-uri=" + LocalRedis.get().uri(),
                            "--herald.crypto-key=" + CRYPTO_KEY,
                            "--herald.gateway.max-in-flight=" + MAX_IN_FLIGHT,
                            "--herald.gateway.fcm.endpoint=" + sandbox.fcmEndpoint(),
                            "--herald.gateway.apns.sandbox-endpoint=" + sandbox.apnsEndpoint(),
                            "--herald.gateway.apns.production-endpoint=" + sandbox.apnsEndpoint(),
                            "--herald.gateway.apns.trusted-certificate=" + sandbox.apnsCertificate(),
                            "--logging.level.root=warn"));
        }
        ConfigurableApplicationContext first = replicas.getFirst();
        apps = first.getBean(AppStore.class);
        status = first.getBean(MessageStatusStore.class);
        rabbit = first.getBean(RabbitTemplate.class);
        json = first.getBean(JsonMapper.class);
    }

    @AfterEach
    void calmSandbox() {
        sandbox.faults().restore();
    }

    @AfterAll
    static void stopReplicas() {
        replicas.forEach(ConfigurableApplicationContext::close);
        sandbox.close();
    }

    @Test
    void anAppAtItsFcmQuotaNeverExceedsItAcrossReplicasWhileAnotherAppSendsUnhindered() {
        String limited = newApp("herald-sandbox");
        String free = newApp("herald-sandbox");
        apps.setLimits(limited, new AppLimits(6_000L, null, null)).join(); // a burst of 100, then 5,900 a minute
        List<String> limitedTokens = tokens("quota-a", 600);
        List<String> freeTokens = tokens("quota-b", 600);
        String limitedMessage = publish(limited, limitedTokens, null); // queued first, ahead of the other app
        String freeMessage = publish(free, freeTokens, null);

        // Time stands still: the limited app gets its burst and no more; the other app, queued behind it, all.
        LongSupplier limitedSent = () -> accepted(limitedTokens);
        awaitCompleted(freeMessage, Duration.ofSeconds(60));
        assertThat(accepted(freeTokens)).isEqualTo(600);
        awaitExactly(limitedSent, 100);

        // Each second lets 5,900/60 more through, across all three replicas together.
        double allowed = 100;
        for (int second = 1; second <= 5; second++) {
            clock.advance(Duration.ofSeconds(1));
            allowed += 5_900 / 60.0;
            awaitExactly(limitedSent, (long) Math.floor(allowed));
        }
        clock.advance(Duration.ofSeconds(1)); // 9 left, a second's worth more allowed
        MessageStatus done = awaitCompleted(limitedMessage, Duration.ofSeconds(30));
        assertThat(done.sent()).isEqualTo(600);
        assertThat(sandbox.counts().stats().duplicates()).isZero();
        assertThat(throttledOnEachReplica(limited)).allSatisfy(count -> assertThat(count).isPositive());
        assertThat(throttledOnEachReplica(free)).allSatisfy(count -> assertThat(count).isZero());
    }

    @Test
    void aThrottledCampaignKeepsItsRateAcrossReplicas() {
        String app = newApp("herald-sandbox");
        List<String> tokens = tokens("campaign", 300);
        String message = publish(app, tokens, 3_000L); // a burst of 50, then 2,950 a minute
        LongSupplier sent = () -> accepted(tokens);

        awaitExactly(sent, 50);
        double allowed = 50;
        while (allowed < tokens.size()) { // the bucket holds a burst at most: time moves a second at a time
            clock.advance(Duration.ofSeconds(1));
            allowed += 2_950 / 60.0;
            awaitExactly(sent, Math.min(tokens.size(), (long) Math.floor(allowed)));
        }
        assertThat(awaitCompleted(message, Duration.ofSeconds(30)).sent()).isEqualTo(300);
    }

    @Test
    void aTooManyRequestsStormSlowsOnlyThatAppOnEveryReplicaAndLosesNothing() {
        String stormed = newApp("storm-project");
        String calm = newApp("herald-sandbox");
        List<String> stormedTokens = tokens("storm", 3_000);
        List<String> calmTokens = tokens("calm", 300);
        sandbox.faults().update(new FaultsUpdate(null, null, null, 5L, null, List.of("storm-project")));
        String stormedMessage = publish(stormed, stormedTokens, null);
        String calmMessage = publish(calm, calmTokens, null);

        awaitCompleted(calmMessage, Duration.ofSeconds(60));
        assertThat(accepted(calmTokens)).isEqualTo(300);
        // The first 429 on each replica stops it at once, and the others through Redis: what reached the
        // provider is what was in flight then, not an attempt per target (let alone retries).
        await().atMost(Duration.ofSeconds(30)).until(() -> throttledOnEachReplica(stormed).stream().allMatch(n -> n > 0));
        long stormAttempts = attempts(stormedTokens);
        assertThat(stormAttempts).isBetween(1L, (long) 2 * REPLICAS * MAX_IN_FLIGHT);
        assertThat(accepted(stormedTokens)).isZero();

        sandbox.faults().update(new FaultsUpdate(null, null, null, null, null, List.of()));
        clock.advance(Duration.ofSeconds(5)); // the Retry-After has passed
        MessageStatus done = awaitCompleted(stormedMessage, Duration.ofSeconds(90));
        assertThat(done.sent()).isEqualTo(3_000);
        assertThat(done.failures()).isEmpty();
        System.out.printf("QuotaReplicasTests storm: %d attempts of the stormed app during the storm (%d targets), "
                + "%.0f 429s counted by the replicas%n", stormAttempts, stormedTokens.size(), providerThrottled(stormed));
    }

    private String newApp(String projectId) {
        String appId = "quota-" + UUID.randomUUID();
        apps.create(appId, "Quota test").join();
        Map<String, Object> account = sandbox.demoServiceAccount();
        apps.setFcm(appId, new FcmCredential(json.writeValueAsString(account), projectId, (String) account.get("client_email"))).join();
        return appId;
    }

    private static List<String> tokens(String prefix, int count) {
        String run = UUID.randomUUID().toString();
        return IntStream.range(0, count).mapToObj(i -> prefix + "-" + run + "-" + i).toList();
    }

    /** The message in batches of {@value #BATCH} on the normal queue, optionally throttled. */
    private String publish(String appId, List<String> tokens, Long throttlePerMinute) {
        String messageId = UUID.randomUUID().toString();
        Instant now = clock.instant();
        status.accepted(messageId, appId, Optional.of(tokens.size()), now).join();
        for (int from = 0, number = 0; from < tokens.size(); from += BATCH, number++) {
            List<Target> targets = tokens.subList(from, Math.min(tokens.size(), from + BATCH)).stream()
                    .map(token -> new Target(Channel.fcm, token, null)).toList();
            PushBatch batch = new PushBatch(messageId, appId, number, Priority.normal, new Notification("Hi", "there", Map.of(), Map.of()),
                    null, now, now.plusSeconds(600), targets, throttlePerMinute);
            MessageProperties properties = new MessageProperties();
            properties.setContentType(MessageProperties.CONTENT_TYPE_JSON);
            rabbit.send(Queues.EXCHANGE, Queues.SEND_NORMAL, new Message(json.writeValueAsBytes(batch), properties));
        }
        return messageId;
    }

    private MessageStatus awaitCompleted(String messageId, Duration within) {
        await().atMost(within).until(() -> status.find(messageId).join().map(s -> s.completedAt() != null).orElse(false));
        return status.find(messageId).join().orElseThrow();
    }

    /**
     * Waits for {@code count} to reach {@code expected}, failing at once if it ever passes it, then
     * watches through two parking rounds that it stays there (batches that waited come back each
     * second and ask again; a bucket that let too many through would show it then).
     */
    private static void awaitExactly(LongSupplier count, long expected) {
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            long now = count.getAsLong();
            assertThat(now).as("accepted so far (allowed: %d)", expected).isLessThanOrEqualTo(expected);
            return now == expected;
        });
        long watchUntil = System.nanoTime() + Duration.ofMillis(2_500).toNanos();
        await().atMost(Duration.ofSeconds(5)).until(() -> {
            assertThat(count.getAsLong()).as("accepted after reaching the limit").isEqualTo(expected);
            return System.nanoTime() >= watchUntil;
        });
    }

    private static long accepted(List<String> tokens) {
        return tokens.stream().mapToLong(token -> sandbox.counts().received(token).fcm()).sum();
    }

    private static long attempts(List<String> tokens) {
        return tokens.stream().mapToLong(token -> sandbox.counts().received(token).attempts()).sum();
    }

    /** Targets each replica held back for the app (any cause). */
    private static List<Double> throttledOnEachReplica(String appId) {
        return replicas.stream().map(replica -> replica.getBean(MeterRegistry.class).find("herald.gateway.throttled")
                .tag("app", appId).counters().stream().mapToDouble(Counter::count).sum()).toList();
    }

    private static double providerThrottled(String appId) {
        return replicas.stream().mapToDouble(replica -> replica.getBean(MeterRegistry.class).find("herald.gateway.provider.throttled")
                .tag("app", appId).counters().stream().mapToDouble(Counter::count).sum()).sum();
    }
}
