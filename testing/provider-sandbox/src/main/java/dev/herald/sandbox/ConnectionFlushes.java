package dev.herald.sandbox;

import io.netty.channel.Channel;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import reactor.netty.http.server.HttpServer;

/**
 * Both ports hold a connection's flushes until its event loop has run what is queued. Why: the
 * answers are written when their delay ends, outside any read, and every HTTP/2 stream flushed its
 * own answer, one {@code writev} per answer. That system call was the sandbox's top frame in the
 * fan-out profile (a fifth of its samples), and each of those writes is a read in the gateway. The
 * answers whose delays end in the same turn of the loop now leave in one write. Added to the
 * connection only, first in its pipeline (next to the socket, where it sees TLS's flushes too).
 */
public final class ConnectionFlushes {
    /** Flushes held back at most before one goes out anyway (Netty's default). */
    static final int FLUSHES_HELD = FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES;

    private ConnectionFlushes() {
    }

    public static HttpServer consolidated(HttpServer server) {
        return server.doOnChannelInit((observer, channel, remoteAddress) -> consolidate(channel));
    }

    static void consolidate(Channel channel) {
        if (!(channel instanceof Http2StreamChannel)) {
            channel.pipeline().addFirst(new FlushConsolidationHandler(FLUSHES_HELD, true));
        }
    }
}
