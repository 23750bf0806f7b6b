package dev.herald.dispatcher.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.quota.RateBuckets;
import dev.herald.store.quota.RateBuckets.Grant;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.RedisLink;
import dev.herald.testsupport.LocalRedis;
import dev.herald.testsupport.SettableClock;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** API tokens leased from the shared bucket in real Redis, time moved by hand. */
class ApiTokenLeasesTests {
    private static final AtomicInteger bucketCalls = new AtomicInteger();
    private static RedisLink link;
    private static HeraldFunctions functions;
    private final SettableClock clock = new SettableClock(Instant.parse("2030-01-01T00:00:00Z"));
    private final String app = "app-" + UUID.randomUUID();

    @BeforeAll
    static void connect() {
        link = RedisLink.connect(LocalRedis.get().uri(), false);
        functions = new HeraldFunctions(counting(link.async()));
    }

    @AfterAll
    static void close() {
        link.close();
    }

    /** The commands, counting the function calls (each a round trip to the bucket). */
    @SuppressWarnings("unchecked")
    private static RedisClusterAsyncCommands<String, String> counting(RedisClusterAsyncCommands<String, String> redis) {
        return (RedisClusterAsyncCommands<String, String>) Proxy.newProxyInstance(ApiTokenLeasesTests.class.getClassLoader(),
                new Class<?>[] {RedisClusterAsyncCommands.class}, (proxy, method, args) -> {
                    if (method.getName().equals("fcall")) {
                        bucketCalls.incrementAndGet();
                    }
                    try {
                        return method.invoke(redis, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private ApiTokenLeases replica() {
        return new ApiTokenLeases(new RateBuckets(functions, clock), clock);
    }

    @Test
    void aBusyReplicaTakesItsTokensALeaseAtATime() {
        ApiTokenLeases leases = replica();
        int before = bucketCalls.get();
        for (int i = 0; i < 1000; i++) {
            assertThat(leases.take(app, 10_000).granted()).isEqualTo(1);
        }
        // Leases of 1, 2, 4 ... up to 200 tokens (20 ms of 10,000/s): a dozen round trips, not 1000.
        assertThat(bucketCalls.get() - before).isBetween(5, 15);
    }

    @Test
    void replicasTogetherNeverPassMoreThanTheSharedBucketGrants() {
        ApiTokenLeases one = replica();
        ApiTokenLeases two = replica();
        int passed = 0;
        for (int i = 0; i < 400; i++) {
            passed += (i % 2 == 0 ? one : two).take(app, 100).granted();
        }
        // Time stands still: the bucket's burst (a second's worth, 100) and not one more; leases of
        // at most 2 tokens (20 ms of 100/s) leave at most one token unspent per replica.
        assertThat(passed).isBetween(98, 100);
        Grant refused = one.take(app, 100);
        assertThat(refused.granted()).isZero();
        assertThat(refused.nextTokenIn()).isPositive();
    }

    @Test
    void aLeaseIsSpentOnlyWithinItsTimeThenItsRestIsDropped() {
        ApiTokenLeases leases = replica();
        for (int i = 0; i < 100; i++) {
            leases.take(app, 10_000);
        }
        int before = bucketCalls.get();
        leases.take(app, 10_000);
        assertThat(bucketCalls.get()).as("served from the lease").isEqualTo(before);
        clock.advance(ApiTokenLeases.LEASE_TIME);
        leases.take(app, 10_000);
        assertThat(bucketCalls.get()).as("a new lease after the old one's time").isEqualTo(before + 1);
    }

    @Test
    void aQuietAppTakesOneTokenAtATime() {
        ApiTokenLeases leases = replica();
        int before = bucketCalls.get();
        for (int i = 0; i < 3; i++) {
            assertThat(leases.take(app, 10_000).granted()).isEqualTo(1);
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(bucketCalls.get() - before).isEqualTo(3);
    }
}
