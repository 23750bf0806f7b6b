package dev.herald.store.replica;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Replica leases on a real Redis: what the platform view lists and the gateway routes by. */
class ReplicaLeasesTests {
    private static final Instant STARTED = Instant.parse("2026-11-24T09:00:00Z");

    @RegisterExtension
    static final TestRedis redis = new TestRedis();

    private final ReplicaLeases leases = new ReplicaLeases(redis.async());

    @AfterEach
    void dropAll() {
        for (Service service : Service.values()) {
            join(leases.live(service)).forEach(replica -> join(leases.drop(service, replica.id())));
        }
    }

    @Test
    void aRenewedLeaseIsListedWithWhatTheReplicaSaidOfItself() {
        Replica gateway = Replica.of("gw-a", STARTED, Map.of("inFlight", 3L, "deliveriesPerSecond", 120L));
        join(leases.renew(Service.GATEWAY, gateway, Duration.ofMinutes(1)));

        List<Replica> live = join(leases.live(Service.GATEWAY));
        assertThat(live).containsExactly(gateway);
        assertThat(live.getFirst().version()).as("filtered from the build").isNotBlank().doesNotContain("@");
        assertThat(join(leases.live(Service.CONNECTION_MANAGER))).as("another service's replicas").isEmpty();
        assertThat(join(leases.isLive(Service.GATEWAY, "gw-a"))).isTrue();
    }

    @Test
    void twoReplicasAreTwoAndAGracefulStopRemovesOneAtOnce() {
        for (int i = 0; i < 20; i++) {   // spread over the masters of a cluster
            join(leases.renew(Service.CONNECTION_MANAGER, Replica.of("node-" + i, STARTED.plusSeconds(i),
                    Map.of("connections", (long) i)), Duration.ofMinutes(1)));
        }
        join(leases.renew(Service.GATEWAY, Replica.of("gw-a", STARTED, Map.of()), Duration.ofMinutes(1)));
        join(leases.renew(Service.GATEWAY, Replica.of("gw-b", STARTED.plusSeconds(1), Map.of()), Duration.ofMinutes(1)));
        assertThat(join(leases.live(Service.GATEWAY))).extracting(Replica::id).containsExactly("gw-a", "gw-b");

        join(leases.drop(Service.GATEWAY, "gw-a"));
        join(leases.drop(Service.CONNECTION_MANAGER, "node-3"));
        assertThat(join(leases.live(Service.GATEWAY))).extracting(Replica::id).containsExactly("gw-b");
        List<Replica> nodes = join(leases.live(Service.CONNECTION_MANAGER));
        assertThat(nodes).hasSize(19).extracting(Replica::id).doesNotContain("node-3");
        assertThat(nodes.getLast().figure("connections")).isEqualTo(19);
        assertThat(join(leases.isLive(Service.CONNECTION_MANAGER, "node-3"))).isFalse();
    }

    @Test
    void aLeaseNotRenewedLapsesAndARenewedOneLives() {
        Duration ttl = Duration.ofMillis(300);
        join(leases.renew(Service.GATEWAY, Replica.of("gw-dead", STARTED, Map.of()), ttl));
        join(leases.renew(Service.GATEWAY, Replica.of("gw-alive", STARTED, Map.of()), Duration.ofMinutes(1)));
        assertThat(join(leases.live(Service.GATEWAY))).extracting(Replica::id).contains("gw-dead");
        // Redis expires the key on its own clock: poll, bounded.
        Awaitility.await().atMost(10, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).untilAsserted(() ->
                assertThat(join(leases.live(Service.GATEWAY))).extracting(Replica::id).containsExactly("gw-alive"));
        assertThat(redis.sync().pttl(RedisKeys.replicaLease("gateway", "gw-alive"))).isPositive();
    }
}
