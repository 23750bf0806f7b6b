package dev.herald.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Queues;
import dev.herald.contract.Target;
import dev.herald.contract.amqp.ConfirmedPublisher;
import dev.herald.contract.amqp.ConfirmedPublisher.Outgoing;
import dev.herald.contract.amqp.PublishFailedException;
import dev.herald.sandbox.ProviderSandbox;
import dev.herald.sandbox.counts.Stats;
import dev.herald.store.app.AppStore;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.crypto.CredentialCipher;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.RedisLink;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.testsupport.FreePorts;
import dev.herald.testsupport.ServerProcess;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.IntStream;
import org.springframework.amqp.AmqpException;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * One fault run: the provider sandbox in this JVM, gateways as real processes from the exec jar,
 * given RabbitMQ (one node or a cluster's addresses) and Redis. Publishes fan-out work straight to
 * the send queue, a share of whose targets the sandbox always refuses (so they end in the
 * dead-letter queue), and checks that every target ended exactly once: delivered, or dead-lettered
 * with its reason; a target delivered twice only inside the in-flight window it reports.
 */
final class FaultRun implements AutoCloseable {
    static final String CRYPTO_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    static final int MAX_IN_FLIGHT = 64;
    /** Every this-many-th target is refused by the sandbox on every attempt ({@code flaky99-}): it must end dead-lettered. */
    static final int REFUSED_EVERY = 25;
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final String rabbitAddresses;
    private final String redisUri;
    private final Path workDir;
    private final ProviderSandbox sandbox;
    private final List<ServerProcess> gateways = new ArrayList<>();
    private final RedisLink redis;
    private final AppStore apps;
    private final MessageStatusStore status;
    private final CachingConnectionFactory rabbitConnections;
    private final RabbitTemplate rabbit;
    private final ConfirmedPublisher publisher;
    /** Publishes of the test's work that had to be sent again (nacked, unconfirmed or failed). */
    private int publishRetries;

    FaultRun(String name, String rabbitAddresses, String redisUri) throws IOException {
        this.rabbitAddresses = rabbitAddresses;
        this.redisUri = redisUri;
        this.workDir = Files.createDirectories(Path.of("target", "fault-it", name + "-" + System.currentTimeMillis()));
        this.sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=50");
        this.redis = RedisLink.connect(redisUri, false);
        HeraldFunctions functions = new HeraldFunctions(redis.async());
        this.apps = new AppStore(redis.async(), functions, new CredentialCipher(CRYPTO_KEY), Clock.systemUTC());
        this.status = new MessageStatusStore(redis.async(), functions, Duration.ofHours(1), Clock.systemUTC());
        this.rabbitConnections = new CachingConnectionFactory();
        rabbitConnections.setAddresses(rabbitAddresses);
        this.rabbit = new RabbitTemplate(rabbitConnections);
        // As the dispatcher publishes: confirmed, mandatory, through ConfirmedPublisher.
        this.publisher = new ConfirmedPublisher(rabbitConnections, JSON);
    }

    ProviderSandbox sandbox() {
        return sandbox;
    }

    /** Starts a gateway from the exec jar and waits until it reports ready. */
    ServerProcess startGateway(String name, String... extraArgs) {
        int port = FreePorts.next();
        String java = ProcessHandle.current().info().command().orElseThrow();
        Path jar = Path.of(System.getProperty("herald.gateway.exec-jar", "target/gateway-0.1.0-SNAPSHOT-exec.jar"));
        assertThat(jar).as("gateway exec jar (built by mvn package)").isRegularFile();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx512m", "-jar", jar.toAbsolutePath().toString(),
                "--server.port=" + port,
                "--spring.profiles.active=sandbox",
                "--spring.rabbitmq.addresses=" + rabbitAddresses,
                "--herald.redis-uri=" + redisUri,
                "--herald.gateway.fcm.endpoint=" + sandbox.fcmEndpoint(),
                "--herald.gateway.apns.sandbox-endpoint=" + sandbox.apnsEndpoint(),
                "--herald.gateway.apns.production-endpoint=" + sandbox.apnsEndpoint(),
                "--herald.gateway.apns.trusted-certificate=" + sandbox.apnsCertificate(),
                "--herald.gateway.max-in-flight=" + MAX_IN_FLIGHT,
                // A refused target is dead-lettered after two attempts, quickly.
                "--herald.gateway.retry.max-attempts=2",
                "--herald.gateway.retry.initial-backoff=50ms"));
        command.addAll(List.of(extraArgs));
        ServerProcess gateway = ServerProcess.start(name, command, Map.of("HERALD_CRYPTO_KEY", CRYPTO_KEY), workDir);
        gateways.add(gateway);
        return gateway.awaitHttpReady(port, Duration.ofSeconds(120));
    }

    /**
     * One app, {@code messages} messages of {@code targetsPerMessage} distinct FCM tokens each, all
     * confirmed queued; every {@value #REFUSED_EVERY}th target one the sandbox always refuses.
     */
    List<PushBatch> publishWork(int messages, int targetsPerMessage) {
        return publishWork(messages, targetsPerMessage, REFUSED_EVERY);
    }

    /** As {@link #publishWork(int, int)}, every {@code refusedEvery}th target refused (0: none). */
    List<PushBatch> publishWork(int messages, int targetsPerMessage, int refusedEvery) {
        String appId = "fault-" + UUID.randomUUID();
        apps.create(appId, "Fault test").join();
        Map<String, Object> account = sandbox.demoServiceAccount();
        apps.setFcm(appId, new FcmCredential(JSON.writeValueAsString(account), (String) account.get("project_id"),
                (String) account.get("client_email"))).join();
        Instant now = Instant.now();
        List<PushBatch> work = IntStream.range(0, messages).mapToObj(m -> {
            String messageId = UUID.randomUUID().toString();
            List<Target> targets = IntStream.range(0, targetsPerMessage)
                    .mapToObj(t -> new Target(Channel.fcm, (refusedEvery > 0 && t % refusedEvery == 0 ? "flaky99-" : "fault-")
                            + m + "-" + t + "-" + messageId, null)).toList();
            return new PushBatch(messageId, appId, 0, Priority.normal,
                    new Notification("Hello", "World", Map.of("k", "v"), Map.of()), null, now, now.plusSeconds(600), targets);
        }).toList();
        for (PushBatch batch : work) {
            status.accepted(batch.messageId(), appId, Optional.of(batch.targets().size()), batch.acceptedAt()).join();
        }
        for (PushBatch batch : work) {
            publishUntilConfirmed(batch);
        }
        return work;
    }

    /**
     * One batch, sent again as a client (the dispatcher answering 503) would until RabbitMQ confirms
     * it, through the dispatcher's own publisher: while a killed node's queue leaders move, a publish
     * can be nacked or its connection lost. A nacked message was not taken; one whose connection was
     * lost may have been, and its second copy counts against the duplicates the test allows.
     */
    private void publishUntilConfirmed(PushBatch batch) {
        Outgoing outgoing = new Outgoing(Queues.EXCHANGE, Queues.SEND_NORMAL, batch.messageId(), batch);
        // At once, then every 500 ms (Awaitility waits one poll interval before the first try by default).
        await().atMost(Duration.ofSeconds(60)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(500)).until(() -> {
            try {
                publisher.publishAll(List.of(outgoing), Duration.ofSeconds(10));
                return true;
            } catch (PublishFailedException | AmqpException e) {
                publishRetries++;
                System.out.printf("FaultRun: publish of %s failed (%s), sending it again%n", batch.messageId(), e.getMessage());
                return false;
            }
        });
    }

    /** Waits until the sandbox has accepted {@code accepted} deliveries: the fan-out is well under way. */
    void awaitUnderWay(long accepted) {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(5))
                .until(() -> sandbox.counts().stats().accepted() >= accepted);
    }

    /**
     * What one run ended with: the sandbox's counts, how many dead letters there were, and the
     * targets that ended twice (the window): delivered twice, or dead-lettered twice.
     */
    record Ending(Stats sandbox, int deadLettered, long deliveredTwice, long deadLetteredTwice) {
        long endedTwice() {
            return deliveredTwice + deadLetteredTwice;
        }
    }

    /**
     * Waits (up to {@code within}) for every message to complete, then checks each target ended
     * exactly once: a refused one in the dead-letter queue (with its reason) and never at the
     * sandbox, any other delivered twice at most; what ended more than once (the in-flight window) is
     * returned for the caller to bound: a dead letter whose confirm was lost with its channel (its
     * connection broke, or the channel was closed after a nack, ConfirmedPublisher) is published again.
     */
    Ending awaitAllEndedExactlyOnce(List<PushBatch> work, Duration within) {
        await().atMost(within).pollInterval(Duration.ofMillis(250))
                .until(() -> statuses(work).stream().allMatch(s -> s.completedAt() != null));
        int targetsPerMessage = work.getFirst().targets().size();
        int refusedPerMessage = (targetsPerMessage + REFUSED_EVERY - 1) / REFUSED_EVERY;
        assertThat(statuses(work)).allSatisfy(done -> {
            assertThat(done.total()).isEqualTo(targetsPerMessage);
            assertThat(done.sent()).as("targets counted sent in %s", done.id()).isEqualTo(targetsPerMessage - refusedPerMessage);
            assertThat(done.failed()).as("targets counted failed in %s", done.id()).isEqualTo(refusedPerMessage);
        });
        Map<String, List<String>> deadReasons = deadLetters();
        long twice = 0;
        long deadTwice = 0;
        Map<String, Integer> twiceByMessage = new HashMap<>();
        for (PushBatch batch : work) {
            for (Target target : batch.targets()) {
                long received = sandbox.counts().received(target.token()).fcm();
                if (target.token().startsWith("flaky99-")) {
                    assertThat(received).as("deliveries of refused %s", target.token()).isZero();
                    List<String> reasons = deadReasons.get(target.token());
                    assertThat(reasons).as("dead letters of %s", target.token())
                            .isNotEmpty().allSatisfy(reason -> assertThat(reason).isNotBlank());
                    deadTwice += reasons.size() - 1; // each extra copy counts against the window
                } else {
                    assertThat(received).as("deliveries to %s", target.token()).isBetween(1L, 2L);
                    assertThat(deadReasons).as("dead letters of delivered %s", target.token()).doesNotContainKey(target.token());
                    twice += received - 1;
                    if (received > 1) {
                        twiceByMessage.merge(batch.messageId(), 1, Integer::sum);
                    }
                }
            }
        }
        Stats end = sandbox.counts().stats();
        assertThat(end.duplicates()).isEqualTo(twice);
        int dead = deadReasons.values().stream().mapToInt(List::size).sum();
        assertThat(dead - deadTwice).as("targets dead-lettered").isEqualTo(work.size() * refusedPerMessage);
        if (twice > 0) {
            System.out.printf("FaultRun: targets delivered twice by message %s; publishes retried %d%n", twiceByMessage, publishRetries);
        }
        return new Ending(end, dead, twice, deadTwice);
    }

    /** Everything in the dead-letter queue (taken off it): token -> reasons. */
    private Map<String, List<String>> deadLetters() {
        Map<String, List<String>> reasons = new HashMap<>();
        for (Message letter = rabbit.receive(Queues.DEAD, 1000); letter != null; letter = rabbit.receive(Queues.DEAD, 1000)) {
            JsonNode body = JSON.readTree(letter.getBody());
            String token = body.at("/work/targets/0/token").asString();
            reasons.computeIfAbsent(token, t -> new ArrayList<>())
                    .add(String.valueOf(letter.getMessageProperties().getHeaders().get(Queues.REASON_HEADER)));
        }
        return reasons;
    }

    /** Drops the test's RabbitMQ connection, as a client does when its node died: the next publish connects to a live one. */
    void reconnectRabbit() {
        rabbitConnections.resetConnection();
    }

    /** The run's Redis, as the test's own client. */
    RedisClusterAsyncCommands<String, String> redis() {
        return redis.async();
    }

    MessageStatusStore status() {
        return status;
    }

    List<MessageStatus> statuses(List<PushBatch> work) {
        return work.stream().map(batch -> status.find(batch.messageId()).join().orElseThrow()).toList();
    }

    @Override
    public void close() {
        gateways.forEach(ServerProcess::close);
        sandbox.close();
        rabbitConnections.destroy();
        redis.close();
    }
}
