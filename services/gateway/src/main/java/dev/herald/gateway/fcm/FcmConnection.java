package dev.herald.gateway.fcm;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http2.AbstractHttp2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2ConnectionDecoder;
import io.netty.handler.codec.http2.Http2ConnectionEncoder;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.util.AsciiString;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One HTTP/2 connection to FCM on Netty's HTTP/2 codec itself: a request is a HEADERS and a DATA
 * frame on a new stream, its answer the stream's HEADERS, and its DATA only when it is an error.
 * There is no channel, pipeline or promise chain per request: Reactor Netty's HTTP/2 client, used
 * before, made each stream a child channel, and that machinery was about half of the gateway's CPU
 * in the fan-out profile (docs/perf/). Pushy drives APNs the same way.
 *
 * <p>Streams are reserved from any thread against the server's SETTINGS_MAX_CONCURRENT_STREAMS
 * (an atomic count); everything else is touched on the connection's event loop only. Requests
 * handed over from other threads are written in one task and one flush per turn of the loop.
 */
final class FcmConnection extends Http2ConnectionHandler {
    private static final Logger log = LoggerFactory.getLogger(FcmConnection.class);
    private static final AsciiString POST = AsciiString.cached("POST");
    private static final AsciiString JSON = AsciiString.cached("application/json; charset=UTF-8");
    /** How often open streams are checked against their deadline, at most (and at least every 50 ms). */
    private static final int SWEEPS_PER_TIMEOUT = 10;

    private final FcmConnectionPool pool;
    private final int slot;
    private final AsciiString scheme;
    private final AsciiString authority;
    private final Duration timeout;
    private final IntObjectMap<FcmExchange> open = new IntObjectHashMap<>();
    private final Queue<FcmExchange> toWrite = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean writeScheduled = new AtomicBoolean();
    private final AtomicInteger reserved = new AtomicInteger();
    /** The server's limit on streams at once; 0 until its first SETTINGS, so nothing is sent before. */
    private volatile int maxStreams;
    private volatile boolean ready;
    /** No new stream: the server sent GOAWAY, the stream ids ran out, or the connection closed. */
    private volatile boolean retired;
    private ChannelHandlerContext context;
    private ScheduledFuture<?> sweep;

    private FcmConnection(Http2ConnectionDecoder decoder, Http2ConnectionEncoder encoder, Http2Settings settings,
                          FcmConnectionPool pool, int slot, AsciiString scheme, AsciiString authority, Duration timeout) {
        super(decoder, encoder, settings);
        this.pool = pool;
        this.slot = slot;
        this.scheme = scheme;
        this.authority = authority;
        this.timeout = timeout;
        decoder.frameListener(new Frames());
        connection().addListener(new Http2ConnectionAdapter() {
            @Override
            public void onStreamClosed(Http2Stream stream) {
                unanswered(stream.id(), "FCM closed the stream without an answer");
            }
        });
    }

    static FcmConnection create(FcmConnectionPool pool, int slot, AsciiString scheme, AsciiString authority, Duration timeout) {
        return new Builder(pool, slot, scheme, authority, timeout).create();
    }

    int slot() {
        return slot;
    }

    boolean ready() {
        return ready;
    }

    /** Takes one stream of this connection for a request, if the server allows one more. Any thread. */
    boolean tryReserve() {
        for (;;) {
            int taken = reserved.get();
            if (retired || taken >= maxStreams) {
                return false;
            }
            if (reserved.compareAndSet(taken, taken + 1)) {
                return true;
            }
        }
    }

    /** Gives back a stream taken by {@link #tryReserve()} that will not be used. */
    void unreserve() {
        reserved.decrementAndGet();
    }

    /** Sends a request on a stream taken by {@link #tryReserve()}. Any thread. */
    void start(FcmExchange exchange) {
        toWrite.add(exchange);
        if (writeScheduled.compareAndSet(false, true)) {
            try {
                context.executor().execute(this::writeQueued);
            } catch (RejectedExecutionException shutDown) {
                writeScheduled.set(false);
                failQueued(new FcmTransportException("FCM client shut down"));
            }
        }
    }

    void close() {
        if (context != null) {
            context.close();
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.context = ctx;
        super.handlerAdded(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        super.channelActive(ctx);
        long timeoutNanos = timeout.toNanos();
        long period = Math.max(TimeUnit.MILLISECONDS.toNanos(50), timeoutNanos / SWEEPS_PER_TIMEOUT);
        sweep = ctx.executor().scheduleAtFixedRate(this::expireLate, period, period, TimeUnit.NANOSECONDS);
        // A server that accepts the connection but never speaks HTTP/2 would hold waiting requests forever.
        ctx.executor().schedule(() -> {
            if (!ready) {
                log.warn("FCM connection to {} sent no HTTP/2 SETTINGS within {}: closing it", authority, timeout);
                ctx.close();
            }
        }, timeoutNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        retired = true;
        if (sweep != null) {
            sweep.cancel(false);
        }
        try {
            super.channelInactive(ctx);
        } finally {
            failOpen("FCM connection closed before the answer");
            pool.lost(this);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
        if (Http2CodecUtil.getEmbeddedHttp2Exception(cause) != null) {
            super.exceptionCaught(ctx, cause);
            return;
        }
        // A reset or a TLS failure: the connection is gone; its requests fail and are retried.
        log.debug("FCM connection to {} failed: {}", authority, cause.toString());
        ctx.close();
    }

    /** The HEADERS write failed: the request never reached the server. */
    void writeFailed(FcmExchange exchange, Throwable cause) {
        if (open.get(exchange.streamId) == exchange) {
            open.remove(exchange.streamId);
            released();
            exchange.failed(new FcmTransportException("FCM request not sent: " + cause, cause));
        }
    }

    private void writeQueued() {
        writeScheduled.set(false);
        boolean wrote = false;
        for (FcmExchange exchange; (exchange = toWrite.poll()) != null; ) {
            wrote |= write(exchange);
        }
        if (wrote) {
            // This handler's flush, not the context's: DATA waits in the HTTP/2 flow controller until
            // Http2ConnectionHandler.flush writes it out.
            flush(context);
        }
    }

    private boolean write(FcmExchange exchange) {
        int streamId = retired || !context.channel().isActive() ? -1 : connection().local().incrementAndGetNextStreamId();
        if (streamId < 0) {
            // Closed or closing, or out of stream ids: the pool hands the request to another connection.
            reserved.decrementAndGet();
            if (!retired) {
                retire();
            }
            pool.send(exchange);
            return false;
        }
        exchange.connection = this;
        exchange.streamId = streamId;
        exchange.deadlineNanos = System.nanoTime() + timeout.toNanos();
        open.put(streamId, exchange);
        Http2Headers headers = new DefaultHttp2Headers(false)
                .method(POST)
                .scheme(scheme)
                .authority(authority)
                .path(exchange.path);
        headers.add(HttpHeaderNames.CONTENT_TYPE, JSON);
        headers.add(HttpHeaderNames.AUTHORIZATION, exchange.authorization);
        encoder().writeHeaders(context, streamId, headers, 0, false, context.newPromise().addListener(exchange));
        encoder().writeData(context, streamId, Unpooled.wrappedBuffer(exchange.body), 0, true, context.newPromise());
        return true;
    }

    private void answered(int streamId) {
        FcmExchange exchange = open.remove(streamId);
        if (exchange != null) {
            released();
            exchange.answered();
        }
    }

    private void unanswered(int streamId, String reason) {
        FcmExchange exchange = open.remove(streamId);
        if (exchange != null) {
            released();
            exchange.failed(new FcmTransportException(reason));
        }
    }

    /** A stream is free again: a retired connection closes once its last answer is in. */
    private void released() {
        reserved.decrementAndGet();
        if (retired && open.isEmpty() && context.channel().isActive()) {
            context.close();
        }
        pool.streamFreed();
    }

    private void retire() {
        retired = true;
        pool.retired(this);
        if (open.isEmpty()) {
            context.close();
        }
    }

    private void expireLate() {
        if (open.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        List<FcmExchange> late = null;
        for (FcmExchange exchange : open.values()) {
            if (now - exchange.deadlineNanos >= 0) {
                if (late == null) {
                    late = new ArrayList<>();
                }
                late.add(exchange);
            }
        }
        if (late == null) {
            return;
        }
        for (FcmExchange exchange : late) {
            open.remove(exchange.streamId);
            resetStream(context, exchange.streamId, Http2Error.CANCEL.code(), context.newPromise());
            released();
            exchange.failed(new FcmTransportException("no answer from FCM within " + timeout));
        }
        flush(context);
    }

    private void failOpen(String reason) {
        if (!open.isEmpty()) {
            List<FcmExchange> unanswered = new ArrayList<>(open.values());
            open.clear();
            reserved.addAndGet(-unanswered.size());
            unanswered.forEach(exchange -> exchange.failed(new FcmTransportException(reason)));
        }
        // Requests handed over but not written yet go to another connection.
        for (FcmExchange exchange; (exchange = toWrite.poll()) != null; ) {
            reserved.decrementAndGet();
            pool.send(exchange);
        }
    }

    private void failQueued(Throwable cause) {
        for (FcmExchange exchange; (exchange = toWrite.poll()) != null; ) {
            reserved.decrementAndGet();
            exchange.failed(cause);
        }
    }

    /** The frames of every stream: only answers are read (FCM never pushes). Event loop only. */
    private final class Frames extends Http2FrameAdapter {
        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int padding, boolean endOfStream) {
            FcmExchange exchange = open.get(streamId);
            if (exchange == null) {
                return;
            }
            CharSequence status = headers.status();
            if (status != null) {
                exchange.headers(Integer.parseInt(status, 0, status.length(), 10), headers.get(HttpHeaderNames.RETRY_AFTER));
            }
            if (endOfStream) {
                answered(streamId);
            }
        }

        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int streamDependency,
                                  short weight, boolean exclusive, int padding, boolean endOfStream) {
            onHeadersRead(ctx, streamId, headers, padding, endOfStream);
        }

        @Override
        public int onDataRead(ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding, boolean endOfStream) {
            int processed = data.readableBytes() + padding;
            FcmExchange exchange = open.get(streamId);
            if (exchange != null) {
                if (exchange.wantsBody()) {
                    exchange.data(data);
                }
                if (endOfStream) {
                    answered(streamId);
                }
            }
            return processed;
        }

        @Override
        public void onRstStreamRead(ChannelHandlerContext ctx, int streamId, long errorCode) {
            unanswered(streamId, "FCM reset the stream: " + Http2Error.valueOf(errorCode));
        }

        @Override
        public void onSettingsRead(ChannelHandlerContext ctx, Http2Settings settings) {
            Long max = settings.maxConcurrentStreams();
            boolean first = !ready;
            if (max != null) {
                maxStreams = (int) Math.min(max, Integer.MAX_VALUE);
            } else if (first) {
                maxStreams = Integer.MAX_VALUE; // no limit announced: HTTP/2's default
            }
            ready = true;
            if (first) {
                pool.ready(FcmConnection.this);
            } else {
                pool.streamFreed();
            }
        }

        @Override
        public void onGoAwayRead(ChannelHandlerContext ctx, int lastStreamId, long errorCode, ByteBuf debugData) {
            // Streams after lastStreamId were not processed: Netty closes them, and they fail here as
            // transport failures (retried). The rest finish; a new connection takes new requests.
            log.debug("FCM sent GOAWAY ({}) on a connection to {}", Http2Error.valueOf(errorCode), authority);
            if (!retired) {
                retire();
            }
        }
    }


    private static final class Builder extends AbstractHttp2ConnectionHandlerBuilder<FcmConnection, Builder> {
        private final FcmConnectionPool pool;
        private final int slot;
        private final AsciiString scheme;
        private final AsciiString authority;
        private final Duration timeout;

        Builder(FcmConnectionPool pool, int slot, AsciiString scheme, AsciiString authority, Duration timeout) {
            this.pool = pool;
            this.slot = slot;
            this.scheme = scheme;
            this.authority = authority;
            this.timeout = timeout;
            server(false);
            initialSettings(Http2Settings.defaultSettings().pushEnabled(false));
        }

        FcmConnection create() {
            return build();
        }

        @Override
        protected FcmConnection build(Http2ConnectionDecoder decoder, Http2ConnectionEncoder encoder, Http2Settings settings) {
            return new FcmConnection(decoder, encoder, settings, pool, slot, scheme, authority, timeout);
        }
    }
}
