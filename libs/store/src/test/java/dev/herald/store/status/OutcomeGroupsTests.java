package dev.herald.store.status;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.herald.store.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The linger between a message's outcome calls, with the linger's timer run by hand. */
class OutcomeGroupsTests {
    private static final Duration TTL = Duration.ofHours(1);
    private static final String APP = "shop";

    @RegisterExtension
    static final TestRedis redis = new TestRedis();

    /** Tasks that wait for the linger to end; the test ends it by running them. */
    private final BlockingQueue<Runnable> lingering = new LinkedBlockingQueue<>();
    private final String id = UUID.randomUUID().toString();

    @Test
    void aMessagesFirstOutcomeGoesAtOnceAndThoseArrivingMeanwhileWaitForTheLingerThenGoTogether() throws Exception {
        // CLIENT PAUSE holds the first call in a single Redis; a cluster would need it on every master.
        assumeFalse(TestRedis.CLUSTER);
        MessageStatusStore store = new MessageStatusStore(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
        join(store.accepted(id, APP, Optional.of(3), Instant.now()));
        OutcomeGroups groups = new OutcomeGroups(redis.functions(), TTL, TestRedis.CLOCK, lingering::add);

        CompletableFuture<Boolean> first;
        CompletableFuture<Boolean> second;
        CompletableFuture<Boolean> third;
        client("PAUSE", "10000", "WRITE");
        try {
            first = groups.record(id, APP, 0, "fcm:tok-1", Outcome.sent());
            second = groups.record(id, APP, 0, "fcm:tok-2", Outcome.sent());
            third = groups.record(id, APP, 0, "fcm:tok-3", Outcome.sent());
        } finally {
            client("UNPAUSE");
        }

        assertThat(join(first)).isTrue();
        Runnable nextCall = lingering.poll(10, TimeUnit.SECONDS);
        assertThat(nextCall).as("the call for the outcomes that came meanwhile, waiting for the linger").isNotNull();
        assertThat(second).isNotDone();
        assertThat(third).isNotDone();
        assertThat(status().sent()).isEqualTo(1);

        nextCall.run();

        assertThat(join(second)).isTrue();
        assertThat(join(third)).isTrue();
        assertThat(status().sent()).isEqualTo(3);
        assertThat(status().completedAt()).isNotNull();
        assertThat(lingering).as("nothing waiting: the group closed without another linger").isEmpty();
    }

    @Test
    void aSingleOutcomeNeverWaitsForTheLinger() {
        OutcomeGroups groups = new OutcomeGroups(redis.functions(), TTL, TestRedis.CLOCK, lingering::add);
        MessageStatusStore store = new MessageStatusStore(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
        join(store.accepted(id, APP, Optional.of(1), Instant.now()));

        assertThat(join(groups.record(id, APP, 0, "fcm:tok-1", Outcome.sent()))).isTrue();

        assertThat(lingering).isEmpty();
        assertThat(status().sent()).isEqualTo(1);
    }

    private MessageStatus status() {
        MessageStatusStore store = new MessageStatusStore(redis.async(), redis.functions(), TTL, TestRedis.CLOCK);
        return join(store.find(id)).orElseThrow();
    }

    /** A CLIENT command on a connection of its own (the store's connection is the one paused). */
    private static void client(String... args) {
        CommandArgs<String, String> command = new CommandArgs<>(StringCodec.UTF8);
        for (String arg : args) {
            command.add(arg);
        }
        RedisClient client = RedisClient.create(TestRedis.uri());
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            connection.sync().dispatch(CommandType.CLIENT, new StatusOutput<>(StringCodec.UTF8), command);
        } finally {
            client.shutdown();
        }
    }
}
