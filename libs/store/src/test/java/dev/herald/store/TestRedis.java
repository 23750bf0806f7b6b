package dev.herald.store;

import dev.herald.testsupport.LocalRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A Lettuce client to the test JVM's real redis-server ({@link LocalRedis}). Each instance has its
 * own client, so two instances stand in for two processes sharing one Redis.
 */
public final class TestRedis implements AutoCloseable {
    /** Base64 of 32 fixed bytes: a valid herald.crypto-key for tests. */
    public static final String CRYPTO_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    public static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final RedisClient client = RedisClient.create(LocalRedis.get().uri());
    private final StatefulRedisConnection<String, String> connection = client.connect();

    public RedisAsyncCommands<String, String> async() {
        return connection.async();
    }

    public RedisCommands<String, String> sync() {
        return connection.sync();
    }

    /** A pub/sub connection of this client; closed with it. */
    public StatefulRedisPubSubConnection<String, String> pubSub() {
        return client.connectPubSub();
    }

    public void flush() {
        connection.sync().flushdb();
    }

    @Override
    public void close() {
        client.shutdown();
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
