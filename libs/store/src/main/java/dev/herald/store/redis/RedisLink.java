package dev.herald.store.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/**
 * The store's way to Redis: one Lettuce client, either plain ({@code redis://}, or Sentinel with a
 * {@code redis-sentinel://} URI) or for Redis Cluster (the seed URIs, comma-separated). One command
 * connection serves every caller: it is thread-safe and pipelines concurrent commands, which is what
 * lets the gateway record thousands of outcomes a second without a pool. Callers see the commands
 * common to both clients, so the same store code runs on either.
 *
 * <p>Lettuce flushes each command as it is written: one {@code write} system call per command. The
 * connection's pipeline starts with Netty's flush consolidation, so the commands that reach the
 * event loop in one turn (the five of an accepted send's status, a gateway's outcomes from many
 * threads) leave in one write, at the end of that turn or with the reads it answers. In the accept
 * benchmark's profile the dispatcher's writes to Redis were a tenth of its CPU.
 */
public final class RedisLink implements AutoCloseable {
    /** Flushes held back at most before one goes out anyway (Netty's default). */
    private static final int FLUSHES_HELD = FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES;

    private final ClientResources resources;
    private final AbstractRedisClient client;
    private final StatefulConnection<String, String> connection;
    private final RedisClusterAsyncCommands<String, String> async;
    private final RedisClusterCommands<String, String> sync;
    private final Supplier<StatefulRedisPubSubConnection<String, String>> pubSub;

    private RedisLink(ClientResources resources, AbstractRedisClient client, StatefulConnection<String, String> connection,
                      RedisClusterAsyncCommands<String, String> async, RedisClusterCommands<String, String> sync,
                      Supplier<StatefulRedisPubSubConnection<String, String>> pubSub) {
        this.resources = resources;
        this.client = client;
        this.connection = connection;
        this.async = async;
        this.sync = sync;
        this.pubSub = pubSub;
    }

    /** @param uris one Redis URI, or for a cluster one or more seed URIs separated by commas */
    public static RedisLink connect(String uris, boolean cluster) {
        ClientOptions options = ClientOptions.builder()
                // Fail commands fast while Redis is away instead of queueing them without bound.
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT))
                .build();
        ClientResources resources = ClientResources.builder().nettyCustomizer(new NettyCustomizer() {
            @Override
            public void afterChannelInitialized(Channel channel) {
                consolidateFlushes(channel);
            }
        }).build();
        if (cluster) {
            List<RedisURI> seeds = Arrays.stream(uris.split(",")).map(String::trim).filter(uri -> !uri.isEmpty())
                    .map(RedisURI::create).toList();
            RedisClusterClient client = RedisClusterClient.create(resources, seeds);
            client.setOptions(ClusterClientOptions.builder(options).build());
            StatefulRedisClusterConnection<String, String> connection = client.connect();
            return new RedisLink(resources, client, connection, connection.async(), connection.sync(), client::connectPubSub);
        }
        RedisClient client = RedisClient.create(resources, RedisURI.create(uris.trim()));
        client.setOptions(options);
        StatefulRedisConnection<String, String> connection = client.connect();
        return new RedisLink(resources, client, connection, connection.async(), connection.sync(), client::connectPubSub);
    }

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);

    /**
     * Holds a connection's flushes until its event loop has run what is queued (or a read answered
     * them): the writes made meanwhile go out in one system call. Also when no read is in progress,
     * which is when a caller's commands arrive.
     */
    static void consolidateFlushes(Channel channel) {
        channel.pipeline().addFirst(new FlushConsolidationHandler(FLUSHES_HELD, true));
    }

    public RedisClusterAsyncCommands<String, String> async() {
        return async;
    }

    /** Blocking commands: health checks and tests. */
    public RedisClusterCommands<String, String> sync() {
        return sync;
    }

    /**
     * A new pub/sub connection. On a cluster a message published on any node reaches every node, so
     * subscribing on one is enough.
     */
    public StatefulRedisPubSubConnection<String, String> pubSub() {
        return pubSub.get();
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
        resources.shutdown(); // given to the client, so not shut down with it
    }
}
