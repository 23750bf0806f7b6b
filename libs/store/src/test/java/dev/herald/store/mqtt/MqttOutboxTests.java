package dev.herald.store.mqtt;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.replica.Replica;
import dev.herald.store.replica.ReplicaLeases;
import dev.herald.store.replica.Service;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageCancels;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.store.status.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MqttOutboxTests {
    private static final Duration TTL = Duration.ofHours(1);

    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    private static MqttOutbox outbox;
    private static MessageStatusStore status;

    private final String app = "app-" + UUID.randomUUID().toString().substring(0, 6);
    private final String device = "dev-1";

    @BeforeAll
    static void connect() {
        status = new MessageStatusStore(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
        outbox = new MqttOutbox(redis.async(), redis.functions(), status,
                new MessageCancels(redis.async(), redis.functions(), TTL, TestRedis.CLOCK), new DeviceSessions(redis.async(), redis.functions(), new ReplicaLeases(redis.async()), TestRedis.CLOCK), 3, TestRedis.CLOCK);
    }

    private String accepted() {
        String id = UUID.randomUUID().toString();
        join(status.accepted(id, app, Optional.of(1), Instant.now()));
        return id;
    }

    private MqttOutbox.Entry entry(String id) {
        return new MqttOutbox.Entry(id, "{\"id\":\"" + id + "\"}", System.currentTimeMillis() + 60_000);
    }

    private List<String> ids() {
        return join(outbox.read(app, device)).stream().map(MqttOutbox.Entry::messageId).toList();
    }

    @Test
    void entriesAreReadInArrivalOrderAndAPutOfTheSameIdTwiceChangesNothing() {
        String a = accepted();
        String b = accepted();
        join(outbox.put(app, device, entry(a), null));
        join(outbox.put(app, device, entry(b), null));
        join(outbox.put(app, device, entry(a), null));
        assertThat(ids()).containsExactly(a, b);
    }

    @Test
    void aDeviceThatConnectsDoesNotGetEntriesOfACancelledMessageWhichEndCancelled() {
        String kept = accepted();
        String cancelled = accepted();
        join(outbox.put(app, device, entry(kept), null));
        join(outbox.put(app, device, entry(cancelled), null));
        join(new MessageCancels(redis.async(), redis.functions(), TTL, TestRedis.CLOCK).cancel(cancelled, app));

        assertThat(join(outbox.readForDelivery(app, device))).extracting(MqttOutbox.Entry::messageId).containsExactly(kept);
        assertThat(ids()).containsExactly(kept);
        assertThat(join(status.find(cancelled)).orElseThrow().state()).isEqualTo("cancelled");
        assertThat(join(status.find(cancelled)).orElseThrow().cancelled()).isEqualTo(1);
    }

    @Test
    void aFullBoxDropsItsOldestEntryAndSaysSo() {
        List<String> all = List.of(accepted(), accepted(), accepted(), accepted());
        MqttOutbox.Placement last = null;
        for (String id : all) {
            last = join(outbox.put(app, device, entry(id), null));
        }
        assertThat(last.evicted()).containsExactly(all.getFirst());
        assertThat(ids()).containsExactlyElementsOf(all.subList(1, 4));
    }

    @Test
    void aNewerEntryWithTheSameCollapseKeyReplacesTheOlderOne() {
        String older = accepted();
        String other = accepted();
        String newer = accepted();
        join(outbox.put(app, device, entry(older), "score"));
        join(outbox.put(app, device, entry(other), null));
        MqttOutbox.Placement placement = join(outbox.put(app, device, entry(newer), "score"));
        assertThat(placement.collapsed()).containsExactly(older);
        assertThat(ids()).containsExactly(other, newer);
    }

    @Test
    void settlingRemovesTheEntryAndCountsTheOutcomeOnceAndASettledMessageIsNotPutAgain() {
        String id = accepted();
        join(outbox.put(app, device, entry(id), null));
        assertThat(join(outbox.settle(app, device, id, Outcome.delivered()))).isTrue();
        assertThat(join(outbox.settle(app, device, id, Outcome.delivered()))).isFalse();
        assertThat(ids()).isEmpty();
        // A redelivered gateway batch puts it again: the settled target is not boxed a second time.
        join(outbox.put(app, device, entry(id), null));
        assertThat(ids()).isEmpty();
        MessageStatus message = join(status.find(id)).orElseThrow();
        assertThat(message.delivered()).isEqualTo(1);
        assertThat(message.state()).isEqualTo("delivered");
    }

    @Test
    void thePlacementNamesTheNodeHoldingTheDeviceOnlyWhileTheNodesLeaseLives() {
        String id = accepted();
        redis.sync().set(RedisKeys.mqttSession(app, device), "node-a|1");
        assertThat(join(outbox.put(app, device, entry(id), null)).node()).isEmpty();
        join(new ReplicaLeases(redis.async()).renew(Service.CONNECTION_MANAGER,
                Replica.of("node-a", Instant.now(), Map.of("connections", 1L)), Duration.ofMinutes(1)));
        assertThat(join(outbox.put(app, device, entry(accepted()), null)).node()).contains("node-a");
    }

    @Test
    void aBoxWithAnExpiredEntryIsDueUntilReindexedWithoutIt() {
        String expired = accepted();
        String lasting = accepted();
        long now = System.currentTimeMillis();
        join(outbox.put(app, device, new MqttOutbox.Entry(expired, "{}", now - 1), null));
        join(outbox.put(app, device, new MqttOutbox.Entry(lasting, "{}", now + 60_000), null));
        MqttOutbox.Box box = new MqttOutbox.Box(app, device);
        assertThat(join(outbox.due(now, 10_000))).contains(box);
        join(outbox.settle(app, device, expired, Outcome.expired()));
        join(outbox.reindex(box));
        assertThat(join(outbox.due(now, 10_000))).doesNotContain(box);
        assertThat(join(outbox.due(now + 60_000, 10_000))).contains(box);
        join(outbox.settle(app, device, lasting, Outcome.delivered()));
        join(outbox.reindex(box));
        assertThat(join(outbox.due(Long.MAX_VALUE / 2, 10_000))).doesNotContain(box);
    }
}
