package dev.herald.sandbox;

import io.netty.channel.EventLoop;
import reactor.netty.http.server.HttpServerRequest;

/** The event loop that owns a request's channel (for HTTP/2, the connection's loop). */
public final class EventLoops {
    private EventLoops() {
    }

    public static EventLoop of(HttpServerRequest request) {
        EventLoop[] loop = new EventLoop[1];
        request.withConnection(connection -> loop[0] = connection.channel().eventLoop());
        return loop[0];
    }
}
