package dev.herald.gateway.fcm;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.netty.util.AsciiString;
import java.net.URI;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bounded pool of HTTP/2 connections to one FCM endpoint ({@code https://} with ALPN, or h2c
 * with prior knowledge for {@code http://}, as the provider sandbox speaks). A request takes a
 * stream on the first connection with one free; when every connection is full it waits here, in
 * order, and another connection is opened while the pool has room. Connections open on demand,
 * one at a time; one that is lost or told to go away is replaced by the next demand. When none can
 * be opened the waiting requests fail (transport failures, which the gateway retries) rather than
 * wait for ever.
 */
final class FcmConnectionPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FcmConnectionPool.class);

    private final EventLoopGroup eventLoops;
    private final SslContext tls;
    private final String host;
    private final int port;
    private final AsciiString scheme;
    private final AsciiString authority;
    private final Duration timeout;
    private final AtomicReferenceArray<FcmConnection> connections;
    private final AtomicIntegerArray opening;
    private final Queue<FcmExchange> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger drains = new AtomicInteger();
    private volatile boolean closed;

    FcmConnectionPool(URI endpoint, int size, Duration timeout, EventLoopGroup eventLoops) {
        this(endpoint, size, timeout, eventLoops, "https".equalsIgnoreCase(endpoint.getScheme()) ? defaultTls() : null);
    }

    /** With the TLS context to use for an {@code https://} endpoint (tests trust a certificate of their own). */
    FcmConnectionPool(URI endpoint, int size, Duration timeout, EventLoopGroup eventLoops, SslContext tls) {
        if (size < 1) {
            throw new IllegalArgumentException("FCM connections must be at least 1, was " + size);
        }
        boolean secure = "https".equalsIgnoreCase(endpoint.getScheme());
        this.eventLoops = eventLoops;
        this.tls = secure ? tls : null;
        this.host = endpoint.getHost();
        this.port = endpoint.getPort() > 0 ? endpoint.getPort() : secure ? 443 : 80;
        this.scheme = AsciiString.cached(secure ? "https" : "http");
        this.authority = AsciiString.cached(endpoint.getPort() > 0 ? host + ":" + port : host);
        this.timeout = timeout;
        this.connections = new AtomicReferenceArray<>(size);
        this.opening = new AtomicIntegerArray(size);
    }

    private static SslContext defaultTls() {
        try {
            return SslContextBuilder.forClient()
                    .ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                    .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            ApplicationProtocolNames.HTTP_2))
                    .endpointIdentificationAlgorithm("HTTPS")
                    .build();
        } catch (SSLException e) {
            throw new IllegalStateException("cannot set up TLS for FCM", e);
        }
    }

    /** Starts the request on a free stream, or keeps it waiting for one. Any thread. */
    void send(FcmExchange exchange) {
        if (closed) {
            exchange.failed(new FcmTransportException("FCM client closed"));
            return;
        }
        if (waiting.isEmpty()) {
            FcmConnection connection = reserveStream();
            if (connection != null) {
                connection.start(exchange);
                return;
            }
        }
        waiting.add(exchange);
        drain();
    }

    /** A connection's first SETTINGS arrived: it takes requests. */
    void ready(FcmConnection connection) {
        if (closed) {
            connection.close();
            return;
        }
        connections.set(connection.slot(), connection);
        opening.set(connection.slot(), 0);
        drain();
    }

    /** A stream ended (or the server allowed more): waiting requests may start. */
    void streamFreed() {
        if (!waiting.isEmpty()) {
            drain();
        }
    }

    /** The connection takes no new requests (GOAWAY, stream ids used up): its place is free. */
    void retired(FcmConnection connection) {
        connections.compareAndSet(connection.slot(), connection, null);
        drain();
    }

    /** The connection closed. One that never became ready counts as a failure to connect. */
    void lost(FcmConnection connection) {
        connections.compareAndSet(connection.slot(), connection, null);
        if (!connection.ready()) {
            openFailed(connection.slot(), new FcmTransportException("FCM connection to " + authority
                    + " closed before it spoke HTTP/2"));
        } else {
            drain();
        }
    }

    @Override
    public void close() {
        closed = true;
        for (int i = 0; i < connections.length(); i++) {
            FcmConnection connection = connections.getAndSet(i, null);
            if (connection != null) {
                connection.close();
            }
        }
        failWaiting(new FcmTransportException("FCM client closed"));
    }

    private FcmConnection reserveStream() {
        // First free first: few connections stay busy, so their writes share flushes.
        for (int i = 0; i < connections.length(); i++) {
            FcmConnection connection = connections.get(i);
            if (connection != null && connection.tryReserve()) {
                return connection;
            }
        }
        return null;
    }

    /** One thread at a time starts waiting requests; a call while it runs makes it look again. */
    private void drain() {
        if (drains.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            while (!waiting.isEmpty() && !closed) {
                FcmConnection connection = reserveStream();
                if (connection == null) {
                    openAnother();
                    break;
                }
                FcmExchange next = waiting.poll();
                if (next == null) {
                    connection.unreserve();
                    break;
                }
                connection.start(next);
            }
            missed = drains.addAndGet(-missed);
        } while (missed != 0);
    }

    private void openAnother() {
        for (int i = 0; i < opening.length(); i++) {
            if (opening.get(i) != 0) {
                return; // one at a time: it may be all the demand needs
            }
        }
        for (int i = 0; i < connections.length(); i++) {
            if (connections.get(i) == null && opening.compareAndSet(i, 0, 1)) {
                open(i);
                return;
            }
        }
    }

    private void open(int slot) {
        new Bootstrap().group(eventLoops).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, timeout.toMillis()))
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel channel) {
                        if (tls != null) {
                            channel.pipeline().addLast(tls.newHandler(channel.alloc(), host, port));
                        }
                        channel.pipeline().addLast(FcmConnection.create(FcmConnectionPool.this, slot, scheme, authority, timeout));
                    }
                })
                .connect(host, port)
                .addListener((ChannelFuture connected) -> {
                    if (!connected.isSuccess()) {
                        openFailed(slot, connected.cause());
                    }
                });
    }

    private void openFailed(int slot, Throwable cause) {
        opening.set(slot, 0);
        log.warn("cannot connect to FCM at {}: {}", authority, cause.toString());
        boolean anyUsable = false;
        for (int i = 0; i < connections.length(); i++) {
            anyUsable |= connections.get(i) != null;
        }
        if (anyUsable) {
            drain();
        } else {
            failWaiting(new FcmTransportException("cannot connect to FCM at " + authority + ": " + cause.getMessage(), cause));
        }
    }

    private void failWaiting(Throwable cause) {
        for (FcmExchange exchange; (exchange = waiting.poll()) != null; ) {
            exchange.failed(cause);
        }
    }
}
