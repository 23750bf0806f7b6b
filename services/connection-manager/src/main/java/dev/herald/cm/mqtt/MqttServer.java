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
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The MQTT listeners: Netty with its MQTT 3.1.1/5 codec and one small handler per connection
 * ({@link DeviceConnection}), over plain TCP, TLS ({@link ServerTls}), WebSocket and WebSocket over
 * TLS (Netty's HTTP and WebSocket handlers, {@link WebSocketFrames}). Every listener serves the same
 * devices the same way; only the bytes under MQTT differ. Started after the node-queue consumer and stopped before it
 * (lifecycle phase), so a device never connects to a node that cannot yet receive its messages.
 */
public final class MqttServer implements SmartLifecycle {
    /** Lifecycle phase: late start, early stop. */
    public static final int PHASE = Integer.MAX_VALUE - 100;
    private static final Logger log = LoggerFactory.getLogger(MqttServer.class);
    /** Longest client id accepted (device ids are at most 128 characters). */
    private static final int MAX_CLIENT_ID = 256;
    /** The WebSocket upgrade request is small: headers only. */
    private static final int MAX_HANDSHAKE = 8192;

    /** How devices reach the node. */
    public enum Listener {
        MQTT(false, false), MQTT_TLS(true, false), WEBSOCKET(false, true), WEBSOCKET_TLS(true, true);

        private final boolean tls;
        private final boolean websocket;

        Listener(boolean tls, boolean websocket) {
            this.tls = tls;
            this.websocket = websocket;
        }
    }

    private final ConnectionContext context;
    private final CmProperties.Mqtt settings;
    /** Every open connection, so a graceful stop can wait until they are closed. */
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private EventLoopGroup acceptor;
    private EventLoopGroup workers;
    private final Map<Listener, Channel> listeners = new EnumMap<>(Listener.class);
    private ServerTls tls;
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
        CmProperties.Tls tlsSettings = settings.tls();
        CmProperties.WebSocket websocket = settings.websocket();
        if (tlsSettings.enabled()) {
            tls = new ServerTls(Path.of(tlsSettings.certificateDir()));
            long check = tlsSettings.reloadCheck().toMillis();
            // On the acceptor's thread: reading two small files never holds up a device's connection.
            acceptor.scheduleWithFixedDelay(tls::reloadIfChanged, check, check, TimeUnit.MILLISECONDS);
        }
        if (settings.plain()) {
            bind(Listener.MQTT, settings.port());
        }
        if (tlsSettings.enabled()) {
            bind(Listener.MQTT_TLS, tlsSettings.port());
        }
        if (websocket.enabled() && settings.plain()) {
            bind(Listener.WEBSOCKET, websocket.port());
        }
        if (websocket.enabled() && tlsSettings.enabled()) {
            bind(Listener.WEBSOCKET_TLS, websocket.tlsPort());
        }
        running = true;
    }

    private void bind(Listener kind, int port) {
        long connectTimeout = settings.connectTimeout().toMillis();
        WebSocketServerProtocolConfig websocket = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(settings.websocket().path()).subprotocols(WebSocketFrames.SUBPROTOCOLS)
                // A frame holds one packet as clients send them; the MQTT decoder bounds the packet.
                .maxFramePayloadLength(settings.maxPacketSize() + 8).build();
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptor, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channels.add(channel);
                        ChannelPipeline pipeline = channel.pipeline();
                        // Replaced at CONNECT by one honouring the keepalive.
                        pipeline.addLast(new IdleStateHandler(connectTimeout, 0, 0, TimeUnit.MILLISECONDS));
                        if (kind.tls) {
                            pipeline.addLast(tls.newHandler(channel.alloc()));
                        }
                        if (kind.websocket) {
                            pipeline.addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_HANDSHAKE),
                                    new WebSocketServerProtocolHandler(websocket), WebSocketFrames.INSTANCE);
                        }
                        pipeline.addLast(
                                new MqttDecoder(settings.maxPacketSize(), MAX_CLIENT_ID),
                                MqttEncoder.INSTANCE,
                                new DeviceConnection(context));
                    }
                });
        Channel listener = bootstrap.bind(new InetSocketAddress(settings.host(), port)).syncUninterruptibly().channel();
        listeners.put(kind, listener);
        log.info("MQTT ({}) listening on {} as node {}", kind, listener.localAddress(), context.sessions().nodeId());
    }

    /** The plain MQTT port actually bound (tests bind port 0). */
    public int port() {
        return port(Listener.MQTT);
    }

    /** The port a listener actually bound. */
    public int port(Listener kind) {
        Channel listener = listeners.get(kind);
        if (listener == null) {
            throw new IllegalStateException("no " + kind + " listener (see herald.cm.mqtt.*)");
        }
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** Loads the TLS files again now if they changed, as the periodic check does; true if they did. */
    public boolean reloadTlsIfChanged() {
        return tls != null && tls.reloadIfChanged();
    }

    /**
     * Graceful stop: accept no new connections, drop the lease (the gateway stops routing here and
     * keeps new messages in the boxes), tell every device to go elsewhere (MQTT 5: 0x8B server
     * shutting down). Nothing needs handing over: every unacknowledged message is still in its box.
     */
    @Override
    public void stop() {
        running = false;
        listeners.values().forEach(listener -> listener.close().syncUninterruptibly());
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
