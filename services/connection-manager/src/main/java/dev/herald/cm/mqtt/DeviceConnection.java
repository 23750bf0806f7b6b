package dev.herald.cm.mqtt;

import dev.herald.cm.session.SessionRegistry;
import dev.herald.store.mqtt.MqttOutbox;
import dev.herald.store.status.Outcome;
import dev.herald.store.mqtt.MqttAddresses;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttReasonCodes;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttSubAckPayload;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttTopicSubscription;
import io.netty.handler.codec.mqtt.MqttUnsubAckMessage;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One device's MQTT connection, from CONNECT to close. Every field is touched on the connection's
 * event loop only (callbacks from Redis hop back onto it), so there are no locks. Collections are
 * created when first needed: an idle connection carries a handful of fields.
 *
 * <p>Delivery: once the device subscribes to its topic the box in Redis is drained in order; copies
 * arriving on the node's queue meanwhile wait and follow. Each message goes out QoS 1; the device's
 * PUBACK settles it ({@code delivered}) and removes it from the box. Whatever is unacknowledged when
 * the connection ends stays in the box for the next session.
 */
final class DeviceConnection extends ChannelInboundHandlerAdapter implements SessionRegistry.Session {
    private static final Logger log = LoggerFactory.getLogger(DeviceConnection.class);
    private static final int MQTT_5 = 5;
    private static final int RECENT_IDS = 256;

    private enum State { NEW, CONNECTING, CONNECTED, DRAINING, LIVE, CLOSED }

    private record InFlight(MqttOutbox.Entry entry, long sentNanos) {
    }

    private final ConnectionContext context;
    private ChannelHandlerContext ctx;
    private State state = State.NEW;
    private int version;
    private String appId;
    private String deviceId;
    private String topic;
    private String connectionId;
    private boolean claimed;
    private int maxInFlight;
    private int nextPacketId = 1;
    private Map<Integer, InFlight> inFlight;
    private ArrayDeque<MqttOutbox.Entry> waiting;
    private LinkedHashSet<String> recentIds;

    DeviceConnection(ConnectionContext context) {
        this.context = context;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        context.metrics().opened();
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        context.metrics().closed();
        State was = state;
        state = State.CLOSED;
        if (claimed && was != State.CLOSED) {
            context.sessions().release(this).exceptionally(error -> {
                log.debug("session release failed for {}: {}", deviceId, error.toString());
                return null;
            });
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (!(msg instanceof MqttMessage message)) {
                return;
            }
            if (message.decoderResult().isFailure()) {
                badPacket(message.decoderResult().cause());
                return;
            }
            MqttMessageType type = message.fixedHeader().messageType();
            if (state == State.NEW) {
                if (type == MqttMessageType.CONNECT) {
                    connect((MqttConnectMessage) message);
                } else {
                    ctx.close();
                }
                return;
            }
            switch (type) {
                case SUBSCRIBE -> subscribe((MqttSubscribeMessage) message);
                case UNSUBSCRIBE -> unsubscribe((MqttUnsubscribeMessage) message);
                case PUBLISH -> publish((MqttPublishMessage) message);
                case PUBACK -> pubAck(((MqttMessageIdVariableHeader) message.variableHeader()).messageId());
                case PINGREQ -> ctx.writeAndFlush(new MqttMessage(new MqttFixedHeader(MqttMessageType.PINGRESP, false, MqttQoS.AT_MOST_ONCE, false, 0)));
                case DISCONNECT -> ctx.close();
                // A second CONNECT, or a packet only a server sends: a protocol error.
                default -> disconnect(MqttReasonCodes.Disconnect.PROTOCOL_ERROR);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof IdleStateEvent) {
            // No CONNECT in time, or nothing from the device for 1.5 x its keepalive.
            disconnect(MqttReasonCodes.Disconnect.KEEP_ALIVE_TIMEOUT);
        } else {
            ctx.fireUserEventTriggered(event);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("connection {} failed: {}", deviceId, cause.toString());
        ctx.close();
    }

    // --- CONNECT ---------------------------------------------------------------------------------

    private void connect(MqttConnectMessage message) {
        version = message.variableHeader().version();
        String clientId = message.payload().clientIdentifier();
        String username = message.payload().userName();
        boolean v5 = version == MQTT_5;
        if (clientId == null || clientId.isEmpty() || username == null) {
            refuse(v5 ? MqttConnectReturnCode.CONNECTION_REFUSED_CLIENT_IDENTIFIER_NOT_VALID
                    : MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED);
            return;
        }
        OptionalLong generation = context.credentials().generation(username, clientId, message.payload().passwordInBytes());
        if (generation.isEmpty()) {
            refuse(v5 ? MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USERNAME_OR_PASSWORD
                    : MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USER_NAME_OR_PASSWORD);
            return;
        }
        appId = username;
        deviceId = clientId;
        topic = MqttAddresses.deviceTopic(appId, deviceId);
        connectionId = context.sessions().newConnectionId();
        maxInFlight = context.properties().maxInFlight();
        if (v5 && message.variableHeader().properties().getProperty(MqttProperties.MqttPropertyType.RECEIVE_MAXIMUM.value())
                instanceof MqttProperties.IntegerProperty receiveMaximum) {
            maxInFlight = Math.max(1, Math.min(maxInFlight, receiveMaximum.value()));
        }
        int maxKeepAlive = context.properties().mqtt().maxKeepAlive();
        int requested = message.variableHeader().keepAliveTimeSeconds();
        int keepAlive = requested == 0 ? maxKeepAlive : Math.min(requested, maxKeepAlive);
        // The spec's grace: a client silent for one and a half keepalives is gone.
        ctx.pipeline().replace(IdleStateHandler.class, "idle",
                new IdleStateHandler(keepAlive * 1500L, 0, 0, TimeUnit.MILLISECONDS));
        state = State.CONNECTING;
        context.sessions().claim(this, generation.getAsLong()).whenComplete((granted, error) -> ctx.executor().execute(() -> {
            // After an error the session may have been written all the same: released at close.
            claimed = error != null || granted;
            if (state == State.CLOSED) {
                if (claimed) {
                    context.sessions().release(this);
                }
                return;
            }
            if (error != null) {
                log.warn("cannot register the session of {}: {}", deviceId, error.toString());
                refuse(v5 ? MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE_5
                        : MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE);
                return;
            }
            if (!granted) {
                // A password of a revoked generation: right once, not any more.
                refuse(v5 ? MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED_5
                        : MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED);
                return;
            }
            state = State.CONNECTED;
            context.metrics().connect(true);
            MqttMessageBuilders.ConnAckBuilder ack = MqttMessageBuilders.connAck()
                    .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED).sessionPresent(false);
            if (v5) {
                ack.properties(properties -> {
                    properties.maximumPacketSize(context.properties().mqtt().maxPacketSize())
                            .maximumQos((byte) 1).retainAvailable(false).wildcardSubscriptionAvailable(false)
                            .sharedSubscriptionAvailable(false).subscriptionIdentifiersAvailable(false);
                    if (keepAlive != requested) {
                        properties.serverKeepAlive(keepAlive);
                    }
                });
            }
            ctx.writeAndFlush(ack.build());
        }));
    }

    private void refuse(MqttConnectReturnCode code) {
        context.metrics().connect(false);
        ctx.writeAndFlush(MqttMessageBuilders.connAck().returnCode(code).sessionPresent(false).build())
                .addListener(ChannelFutureListener.CLOSE);
    }

    // --- SUBSCRIBE / PUBLISH: access control -------------------------------------------------------

    /**
     * A device may subscribe to its own topic only, with QoS 1 (pushes need the PUBACK as a
     * receipt; a QoS 0 subscription could never confirm anything, so it is refused too).
     */
    private void subscribe(MqttSubscribeMessage message) {
        List<MqttTopicSubscription> wanted = message.payload().topicSubscriptions();
        int[] codes = new int[wanted.size()];
        boolean own = false;
        for (int i = 0; i < codes.length; i++) {
            MqttTopicSubscription subscription = wanted.get(i);
            if (!topic.equals(subscription.topicFilter())) {
                codes[i] = version == MQTT_5 ? MqttReasonCodes.SubAck.NOT_AUTHORIZED.byteValue() & 0xFF : MqttQoS.FAILURE.value();
            } else if (subscription.qualityOfService() == MqttQoS.AT_MOST_ONCE) {
                codes[i] = version == MQTT_5 ? MqttReasonCodes.SubAck.IMPLEMENTATION_SPECIFIC_ERROR.byteValue() & 0xFF : MqttQoS.FAILURE.value();
            } else {
                codes[i] = MqttQoS.AT_LEAST_ONCE.value();
                own = true;
            }
        }
        MqttFixedHeader header = new MqttFixedHeader(MqttMessageType.SUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0);
        ctx.writeAndFlush(new MqttSubAckMessage(header,
                new MqttMessageIdAndPropertiesVariableHeader(message.variableHeader().messageId(), MqttProperties.NO_PROPERTIES),
                new MqttSubAckPayload(codes)));
        if (own && state == State.CONNECTED) {
            drain();
        }
    }

    private void unsubscribe(MqttUnsubscribeMessage message) {
        if (message.payload().topics().contains(topic) && state == State.LIVE) {
            // No more deliveries; what is in flight may still be acknowledged.
            state = State.CONNECTED;
        }
        MqttFixedHeader header = new MqttFixedHeader(MqttMessageType.UNSUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0);
        ctx.writeAndFlush(new MqttUnsubAckMessage(header, MqttMessageIdVariableHeader.from(message.variableHeader().messageId())));
    }

    /**
     * Devices receive, they do not send: a publish to their own topic is accepted and dropped, one
     * to any other topic (another device's) is refused by closing the connection (MQTT 5:
     * DISCONNECT 0x87 not authorized). QoS 2 is not supported (MQTT 5: 0x9B).
     */
    private void publish(MqttPublishMessage message) {
        if (!topic.equals(message.variableHeader().topicName())) {
            context.metrics().badInput();
            disconnect(MqttReasonCodes.Disconnect.NOT_AUTHORIZED);
        } else if (message.fixedHeader().qosLevel() == MqttQoS.EXACTLY_ONCE) {
            disconnect(MqttReasonCodes.Disconnect.QOS_NOT_SUPPORTED);
        } else if (message.fixedHeader().qosLevel() == MqttQoS.AT_LEAST_ONCE) {
            ctx.writeAndFlush(MqttMessageBuilders.pubAck().packetId(message.variableHeader().packetId())
                    .reasonCode(MqttPubReplyMessageVariableHeader.REASON_CODE_OK).build());
        }
    }

    // --- delivery ------------------------------------------------------------------------------------

    private void drain() {
        state = State.DRAINING;
        context.outbox().readForDelivery(appId, deviceId).whenComplete((entries, error) -> ctx.executor().execute(() -> {
            if (state != State.DRAINING) {
                return;
            }
            if (error != null) {
                // The box is intact; the device reconnects and the next session drains it.
                log.warn("cannot read the box of {}: {}", deviceId, error.toString());
                disconnect(MqttReasonCodes.Disconnect.UNSPECIFIED_ERROR);
                return;
            }
            context.metrics().boxSize(entries.size());
            state = State.LIVE;
            ArrayDeque<MqttOutbox.Entry> arrivedMeanwhile = waiting;
            waiting = null;
            entries.forEach(this::enqueue);
            if (arrivedMeanwhile != null) {
                arrivedMeanwhile.forEach(this::enqueue);
            }
            ctx.flush();
        }));
    }

    @Override
    public void redrain() {
        context.outbox().read(appId, deviceId).whenComplete((entries, error) -> ctx.executor().execute(() -> {
            if (state == State.LIVE && error == null) {
                entries.forEach(this::enqueue);
                ctx.flush();
            }
        }));
    }

    @Override
    public void offer(MqttOutbox.Entry entry) {
        ctx.executor().execute(() -> {
            switch (state) {
                // Not subscribed yet: the box has it, the drain at SUBSCRIBE will send it.
                case NEW, CONNECTING, CONNECTED, CLOSED -> { }
                case DRAINING -> waitingQueue().add(entry);
                case LIVE -> {
                    enqueue(entry);
                    ctx.flush();
                }
            }
        });
    }

    /** Sends the entry now if the in-flight window allows, else queues it; each id once per session. */
    private void enqueue(MqttOutbox.Entry entry) {
        if (recentIds == null) {
            recentIds = new LinkedHashSet<>();
        }
        if (!recentIds.add(entry.messageId())) {
            return;
        }
        if (recentIds.size() > RECENT_IDS) {
            recentIds.removeFirst();
        }
        if (inFlight != null && inFlight.size() >= maxInFlight) {
            waitingQueue().add(entry);
        } else {
            send(entry);
        }
    }

    private void send(MqttOutbox.Entry entry) {
        if (System.currentTimeMillis() >= entry.expiresAt()) {
            context.metrics().expired();
            context.outbox().settle(appId, deviceId, entry.messageId(), Outcome.expired());
            return;
        }
        if (inFlight == null) {
            inFlight = new HashMap<>();
        }
        int packetId = nextPacketId();
        inFlight.put(packetId, new InFlight(entry, System.nanoTime()));
        ctx.write(MqttMessageBuilders.publish().topicName(topic).qos(MqttQoS.AT_LEAST_ONCE).retained(false)
                .messageId(packetId).payload(Unpooled.wrappedBuffer(entry.payload().getBytes(StandardCharsets.UTF_8))).build());
    }

    private int nextPacketId() {
        do {
            nextPacketId = nextPacketId == 0xFFFF ? 1 : nextPacketId + 1;
        } while (inFlight.containsKey(nextPacketId));
        return nextPacketId;
    }

    private ArrayDeque<MqttOutbox.Entry> waitingQueue() {
        if (waiting == null) {
            waiting = new ArrayDeque<>();
        }
        return waiting;
    }

    /** The device's receipt: the message is delivered, out of the box, and the window moves on. */
    private void pubAck(int packetId) {
        InFlight acked = inFlight == null ? null : inFlight.remove(packetId);
        if (acked == null) {
            return;
        }
        context.metrics().delivered(acked.sentNanos());
        context.outbox().settle(appId, deviceId, acked.entry().messageId(), Outcome.delivered()).exceptionally(error -> {
            // Still in the box: the next session sends it again and the device drops it by id.
            log.warn("cannot record the delivery of {} to {}: {}", acked.entry().messageId(), deviceId, error.toString());
            return false;
        });
        if (state == State.LIVE && waiting != null) {
            while (!waiting.isEmpty() && inFlight.size() < maxInFlight) {
                send(waiting.poll());
            }
            ctx.flush();
        }
    }

    // --- closing ---------------------------------------------------------------------------------------

    private void badPacket(Throwable cause) {
        context.metrics().badInput();
        log.debug("bad packet from {}: {}", deviceId, cause.toString());
        if (state == State.NEW) {
            ctx.close();
            return;
        }
        disconnect(cause instanceof TooLongFrameException ? MqttReasonCodes.Disconnect.PACKET_TOO_LARGE
                : MqttReasonCodes.Disconnect.MALFORMED_PACKET);
    }

    /** MQTT 5 gets a DISCONNECT with the reason first; MQTT 3.1.1 has none, the connection just closes. */
    private void disconnect(MqttReasonCodes.Disconnect reason) {
        if (!ctx.channel().isActive()) {
            return;
        }
        if (version == MQTT_5 && state != State.NEW) {
            ctx.writeAndFlush(MqttMessageBuilders.disconnect().reasonCode(reason.byteValue()).build())
                    .addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.close();
        }
    }

    @Override
    public void takenOver() {
        ctx.executor().execute(() -> disconnect(MqttReasonCodes.Disconnect.SESSION_TAKEN_OVER));
    }

    @Override
    public void revoked() {
        ctx.executor().execute(() -> disconnect(MqttReasonCodes.Disconnect.NOT_AUTHORIZED));
    }

    @Override
    public void serverShuttingDown() {
        ctx.executor().execute(() -> disconnect(MqttReasonCodes.Disconnect.SERVER_SHUTTING_DOWN));
    }

    @Override
    public String appId() {
        return appId;
    }

    @Override
    public String deviceId() {
        return deviceId;
    }

    @Override
    public String connectionId() {
        return connectionId;
    }
}
