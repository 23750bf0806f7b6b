package dev.herald.cm.mqtt;

import dev.herald.cm.CmMetrics;
import dev.herald.cm.CmProperties;
import dev.herald.store.mqtt.MqttCredentials;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.cm.session.SessionRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The MQTT listener: Netty with its MQTT 3.1.1/5 codec and one small handler per connection
 * ({@link DeviceConnection}). Started after the node-queue consumer and stopped before it
 * (lifecycle phase), so a device never connects to a node that cannot yet receive its messages.
 */
public final class MqttServer implements SmartLifecycle {
    /** Lifecycle phase: late start, early stop. */
    public static final int PHASE = Integer.MAX_VALUE - 100;
    private static final Logger log = LoggerFactory.getLogger(MqttServer.class);
    /** Longest client id accepted (device ids are at most 128 characters). */
    private static final int MAX_CLIENT_ID = 256;

    private final ConnectionContext context;
    private final CmProperties.Mqtt settings;
    /** Every open connection, so a graceful stop can wait until they are closed. */
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private EventLoopGroup acceptor;
    private EventLoopGroup workers;
    private Channel listener;
    private volatile boolean running;

    public MqttServer(CmProperties properties, MqttCredentials credentials, SessionRegistry sessions,
                      MqttOutbox outbox, CmMetrics metrics) {
        this.context = new ConnectionContext(properties, credentials, sessions, outbox, metrics);
        this.settings = properties.mqtt();
    }

    @Override
    public void start() {
        acceptor = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        workers = new MultiThreadIoEventLoopGroup(settings.workerThreads(), NioIoHandler.newFactory());
        long connectTimeout = settings.connectTimeout().toMillis();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptor, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channels.add(channel);
                        channel.pipeline().addLast(
                                // Replaced at CONNECT by one honouring the keepalive.
                                new IdleStateHandler(connectTimeout, 0, 0, TimeUnit.MILLISECONDS),
                                new MqttDecoder(settings.maxPacketSize(), MAX_CLIENT_ID),
                                MqttEncoder.INSTANCE,
                                new DeviceConnection(context));
                    }
                });
        listener = bootstrap.bind(new InetSocketAddress(settings.host(), settings.port())).syncUninterruptibly().channel();
        running = true;
        log.info("MQTT listening on {} as node {}", listener.localAddress(), context.sessions().nodeId());
    }

    /** The port actually bound (tests bind port 0). */
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /**
     * Graceful stop: accept no new connections, drop the lease (the gateway stops routing here and
     * keeps new messages in the boxes), tell every device to go elsewhere (MQTT 5: 0x8B server
     * shutting down). Nothing needs handing over: every unacknowledged message is still in its box.
     */
    @Override
    public void stop() {
        running = false;
        listener.close().syncUninterruptibly();
        context.sessions().dropLease().exceptionally(error -> null).join();
        for (SessionRegistry.Session session : context.sessions().sessions()) {
            session.serverShuttingDown();
        }
        // Let the DISCONNECTs go out; whatever is still open after that (no CONNECT yet) is closed.
        if (!channels.newCloseFuture().awaitUninterruptibly(5, TimeUnit.SECONDS)) {
            channels.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        }
        workers.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
        acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        log.info("MQTT stopped");
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
