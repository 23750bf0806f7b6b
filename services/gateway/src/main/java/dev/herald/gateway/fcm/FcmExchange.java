package dev.herald.gateway.fcm;

import dev.herald.gateway.delivery.ProviderResponse;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import reactor.core.publisher.MonoSink;

/**
 * One request to FCM on one HTTP/2 stream, and where its answer goes. Written and answered on its
 * connection's event loop; a pool that cannot start it yet keeps it waiting. It is its own listener
 * for the HEADERS write, so a request costs no listener object of its own.
 */
final class FcmExchange implements ChannelFutureListener {
    /** An error body is read for its reason code; more than this is an intermediary's page, not FCM's. */
    static final int MAX_ERROR_BODY = 16 * 1024;

    /** Turns FCM's answer into the gateway's: status, Retry-After (or null) and, for an error, the body. */
    @FunctionalInterface
    interface Reader {
        ProviderResponse read(int status, String retryAfter, String body);
    }

    final AsciiString path;
    final AsciiString authorization;
    final byte[] body;
    private final Reader reader;
    private final MonoSink<ProviderResponse> sink;

    // Set on the event loop once the request is written.
    FcmConnection connection;
    int streamId;
    long deadlineNanos;
    private int status;
    private String retryAfter;
    private StringBuilder errorBody;

    FcmExchange(AsciiString path, AsciiString authorization, byte[] body, Reader reader, MonoSink<ProviderResponse> sink) {
        this.path = path;
        this.authorization = authorization;
        this.body = body;
        this.reader = reader;
        this.sink = sink;
    }

    void headers(int status, CharSequence retryAfter) {
        if (this.status == 0) {
            this.status = status;
            this.retryAfter = retryAfter == null ? null : retryAfter.toString();
        }
    }

    boolean wantsBody() {
        return status != 200;
    }

    void data(ByteBuf data) {
        if (errorBody == null) {
            errorBody = new StringBuilder();
        }
        int room = MAX_ERROR_BODY - errorBody.length();
        if (room > 0) {
            errorBody.append(data.toString(data.readerIndex(), Math.min(room, data.readableBytes()), StandardCharsets.UTF_8));
        }
    }

    /** The stream ended: the answer as read. A stream that ended without a status had no answer. */
    void answered() {
        if (status == 0) {
            failed(new FcmTransportException("FCM stream ended without a response status"));
            return;
        }
        ProviderResponse response;
        try {
            response = reader.read(status, retryAfter, errorBody == null ? "" : errorBody.toString());
        } catch (RuntimeException e) {
            sink.error(e);
            return;
        }
        sink.success(response);
    }

    void failed(Throwable cause) {
        sink.error(cause);
    }

    /** The HEADERS write failed before the server could answer (the connection went, or the stream was refused). */
    @Override
    public void operationComplete(ChannelFuture future) {
        if (!future.isSuccess()) {
            connection.writeFailed(this, future.cause());
        }
    }
}
