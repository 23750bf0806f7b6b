package dev.herald.store.mqtt;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class CredentialGenerationsTests {
    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    private static CredentialGenerations generations;
    private static DeviceSessions sessions;

    private final String app = "app-" + UUID.randomUUID().toString().substring(0, 6);
    private final DeviceSessions.Holder first = new DeviceSessions.Holder("node-a", "1");
    private final DeviceSessions.Holder second = new DeviceSessions.Holder("node-b", "7");

    @BeforeAll
    static void connect() {
        generations = new CredentialGenerations(redis.async(), redis.functions());
        sessions = new DeviceSessions(redis.async(), redis.functions(), new ReplicaLeases(redis.async()), TestRedis.CLOCK);
    }

    @Test
    void aDeviceStartsAtGenerationZeroAndClaimsWithItsPassword() {
        assertThat(join(generations.current(app, "d1"))).isZero();
        assertThat(join(sessions.claim(app, "d1", first, 0))).isEqualTo(new DeviceSessions.Claim(true, Optional.empty()));
        assertThat(join(sessions.claim(app, "d1", second, 0))).isEqualTo(new DeviceSessions.Claim(true, Optional.of(first)));
    }

    @Test
    void revokingNamesTheConnectedHolderAndRefusesEveryClaimWithAnEarlierGeneration() {
        join(sessions.claim(app, "d2", first, 0));
        assertThat(join(generations.revoke(app, "d2"))).isEqualTo(new CredentialGenerations.Revoked(1, Optional.of(first)));
        assertThat(join(generations.current(app, "d2"))).isEqualTo(1);
        assertThat(join(sessions.claim(app, "d2", second, 0)).granted()).isFalse();
        // The refused claim did not take the session: the holder to disconnect is still the first.
        assertThat(join(generations.revoke(app, "d2"))).isEqualTo(new CredentialGenerations.Revoked(2, Optional.of(first)));
        assertThat(join(sessions.claim(app, "d2", second, 1)).granted()).isFalse();
        assertThat(join(sessions.claim(app, "d2", second, 2))).isEqualTo(new DeviceSessions.Claim(true, Optional.of(first)));
    }

    @Test
    void aDeviceNeverConnectedCanBeRevoked() {
        assertThat(join(generations.revoke(app, "d3"))).isEqualTo(new CredentialGenerations.Revoked(1, Optional.empty()));
    }

    @Test
    void aGrantedClaimRecordsTheConnectsTimeAndTheDeviceIsConnectedWhileItsNodesLeaseLives() {
        Instant connectedAt = Instant.parse("2026-11-24T09:30:00.123Z");
        ReplicaLeases leases = new ReplicaLeases(redis.async());
        DeviceSessions at = new DeviceSessions(redis.async(), redis.functions(), leases, Clock.fixed(connectedAt, ZoneOffset.UTC));
        assertThat(join(at.presence(app, "d4"))).isEqualTo(new DeviceSessions.Presence(Optional.empty(), false));
        join(generations.revoke(app, "d4"));
        join(at.claim(app, "d4", first, 0));   // refused: an old password records no connect
        assertThat(join(at.presence(app, "d4")).lastConnect()).isEmpty();

        join(at.claim(app, "d4", first, 1));
        assertThat(join(at.presence(app, "d4"))).as("node-a holds no lease")
                .isEqualTo(new DeviceSessions.Presence(Optional.of(connectedAt), false));
        join(leases.renew(Service.CONNECTION_MANAGER, Replica.of("node-a", connectedAt, Map.of()), Duration.ofMinutes(1)));
        assertThat(join(at.presence(app, "d4"))).isEqualTo(new DeviceSessions.Presence(Optional.of(connectedAt), true));
        join(at.release(app, "d4", first));
        assertThat(join(at.presence(app, "d4"))).isEqualTo(new DeviceSessions.Presence(Optional.of(connectedAt), false));
        join(leases.drop(Service.CONNECTION_MANAGER, "node-a"));
    }
}
