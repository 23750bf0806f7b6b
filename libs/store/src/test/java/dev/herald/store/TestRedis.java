package dev.herald.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.keys.RedisKeys;
import dev.herald.store.redis.HeraldFunctions;
import dev.herald.store.redis.RedisLink;
import dev.herald.testsupport.LocalRedis;
import dev.herald.testsupport.LocalRedisCluster;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A store client to the test JVM's real Redis: a single redis-server ({@link LocalRedis}), or with
 * {@code -Dherald.test.redis=cluster} a three-master Redis Cluster ({@link LocalRedisCluster}); the
 * store's pom runs the whole suite both ways. Each instance has its own client, so two instances
 * stand in for two processes sharing one Redis.
 *
 * <p>Before it empties Redis, and when it closes, it asserts that every key there has a shape
 * {@link RedisKeys} defines: code writing a key the store does not own fails the suite.
 *
 * <p>As a class's {@code @RegisterExtension static} field it empties Redis before each test and
 * closes after the class, so the test classes need no lifecycle methods of their own.
 */
public final class TestRedis implements AutoCloseable, BeforeEachCallback, AfterAllCallback {
    /** Base64 of 32 fixed bytes: a valid herald.crypto-key for tests. */
    public static final String CRYPTO_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    public static final Duration TIMEOUT = Duration.ofSeconds(5);
    public static final Clock CLOCK = Clock.systemUTC();
    /** Whether this run's Redis is the cluster. */
    public static final boolean CLUSTER = "cluster".equals(System.getProperty("herald.test.redis"));

    private final RedisLink link = RedisLink.connect(uri(), CLUSTER);
    private HeraldFunctions functions;

    public static String uri() {
        return CLUSTER ? LocalRedisCluster.get().uri() : LocalRedis.get().uri();
    }

    public RedisClusterAsyncCommands<String, String> async() {
        return link.async();
    }

    public RedisClusterCommands<String, String> sync() {
        return link.sync();
    }

    /** The function library, loaded by this client on first use. */
    public synchronized HeraldFunctions functions() {
        if (functions == null) {
            functions = new HeraldFunctions(link.async());
        }
        return functions;
    }

    /** A pub/sub connection of this client; closed with it. */
    public StatefulRedisPubSubConnection<String, String> pubSub() {
        return link.pubSub();
    }

    public void flush() {
        assertEveryKeyIsDefined();
        link.sync().flushall();
    }

    /** Every key in Redis has a shape {@link RedisKeys} defines (on a cluster: on every master). */
    public void assertEveryKeyIsDefined() {
        assertThat(link.sync().keys("*"))
                .as("keys whose shape dev.herald.store.keys.RedisKeys does not define")
                .allSatisfy(key -> assertThat(RedisKeys.KeyPattern.of(key)).as(key).isPresent());
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        flush();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        try {
            assertEveryKeyIsDefined();
        } finally {
            link.close();
        }
    }

    /** The value of a future that must complete within {@link #TIMEOUT}. */
    public static <T> T join(CompletableFuture<T> future) {
        try {
            return future.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (TimeoutException e) {
            throw new AssertionError("not completed within " + TIMEOUT, e);
        }
    }
}
