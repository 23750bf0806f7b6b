package dev.herald.cm.mqtt;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;

/**
 * MQTT over WebSocket, between Netty's WebSocket handlers and the MQTT codec: binary frames carry the
 * MQTT byte stream both ways (a packet may span frames, a frame may hold several packets; the MQTT
 * decoder reassembles). Text frames are no MQTT and close the connection; an HTTP request that did
 * not upgrade on the WebSocket path gets 404.
 */
@ChannelHandler.Sharable
final class WebSocketFrames extends ChannelDuplexHandler {
    static final WebSocketFrames INSTANCE = new WebSocketFrames();
    /** The subprotocols of MQTT over WebSocket: "mqtt" (3.1.1 and 5), "mqttv3.1" (older clients). */
    static final String SUBPROTOCOLS = "mqtt,mqttv3.1";

    private WebSocketFrames() {
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof BinaryWebSocketFrame || msg instanceof ContinuationWebSocketFrame) {
            ctx.fireChannelRead(((WebSocketFrame) msg).content());
            return;
        }
        ReferenceCountUtil.release(msg);
        if (msg instanceof FullHttpRequest request) {
            ctx.writeAndFlush(new DefaultFullHttpResponse(request.protocolVersion(), HttpResponseStatus.NOT_FOUND))
                    .addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.close();
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        ctx.write(msg instanceof ByteBuf bytes ? new BinaryWebSocketFrame(bytes) : msg, promise);
    }
}
