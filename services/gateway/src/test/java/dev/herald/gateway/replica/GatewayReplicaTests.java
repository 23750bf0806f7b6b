package dev.herald.gateway.replica;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.herald.gateway.GatewayApplication;
import dev.herald.gateway.delivery.DeliveryMetrics;
import dev.herald.gateway.delivery.InFlightLimit;
import dev.herald.sandbox.ProviderSandbox;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Gateway replicas' leases on real Redis and RabbitMQ: two running gateways (two application
 * contexts in this JVM) are listed as two, one stopped gracefully is gone at once, and a lease no one
 * renews lapses.
 */
class GatewayReplicaTests {
    private static final String CRYPTO_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    private static ProviderSandbox sandbox;

    @BeforeAll
    static void startSandbox() {
        sandbox = ProviderSandbox.start();
    }

    @AfterAll
    static void stopSandbox() {
        sandbox.close();
    }

    private static ConfigurableApplicationContext gateway() {
        return new SpringApplicationBuilder(GatewayApplication.class)
                .profiles("sandbox")
                .run("--server.port=0",
                        "--spring.rabbitmq.port=" + LocalRabbit.get().port(),
                        "--herald.redis-uri=" + LocalRedis.get().uri(),
                        "--herald.crypto-key=" + CRYPTO_KEY,
                        // Long: a lease that disappears here was deleted, not lapsed.
                        "--herald.gateway.replica-lease=5m",
                        "--herald.gateway.fcm.endpoint=" + sandbox.fcmEndpoint(),
                        "--herald.gateway.apns.sandbox-endpoint=" + sandbox.apnsEndpoint(),
                        "--herald.gateway.apns.production-endpoint=" + sandbox.apnsEndpoint(),
                        "--herald.gateway.apns.trusted-certificate=" + sandbox.apnsCertificate(),
                        "--logging.level.root=warn");
    }

    private static List<String> liveIds(ReplicaLeases leases) {
        return leases.live(Service.GATEWAY).join().stream().map(Replica::id).toList();
    }

    @Test
    void twoRunningGatewaysAreTwoReplicasAndOneStoppedGracefullyIsGoneAtOnce() {
        try (ConfigurableApplicationContext first = gateway()) {
            ReplicaLeases leases = first.getBean(ReplicaLeases.class);
            String firstId = first.getBean(GatewayReplica.class).id();
            String secondId;
            try (ConfigurableApplicationContext second = gateway()) {
                secondId = second.getBean(GatewayReplica.class).id();
                assertThat(secondId).isNotEqualTo(firstId);
                assertThat(liveIds(leases)).contains(firstId, secondId);
                Replica shown = leases.live(Service.GATEWAY).join().stream().filter(r -> r.id().equals(firstId)).findFirst().orElseThrow();
                assertThat(shown.figures()).containsKeys("inFlight", "deliveriesPerSecond");
                assertThat(shown.version()).isNotBlank();
            }
            assertThat(liveIds(leases)).contains(firstId).doesNotContain(secondId);
        }
    }

    @Test
    void aLeaseNoOneRenewsLapses() {
        try (ConfigurableApplicationContext context = gateway()) {
            ReplicaLeases leases = context.getBean(ReplicaLeases.class);
            InFlightLimit limit = new InFlightLimit(1);
            GatewayReplica crashed = new GatewayReplica(leases, Replica.newId("gateway"), Duration.ofMillis(400), limit,
                    new DeliveryMetrics(new SimpleMeterRegistry(), limit), Clock.systemUTC());
            crashed.renew().join();   // renewed once, then never again: as a replica that died
            assertThat(liveIds(leases)).contains(crashed.id());
            // Redis expires the key on its own clock: polled, with a deadline.
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
                    .until(() -> !liveIds(leases).contains(crashed.id()));
            assertThat(liveIds(leases)).contains(context.getBean(GatewayReplica.class).id());
        }
    }
}
