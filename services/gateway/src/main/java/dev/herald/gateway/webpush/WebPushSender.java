package dev.herald.gateway.webpush;

import dev.herald.contract.Channel;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.gateway.GatewayProperties;
import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.ProviderSender;
import dev.herald.store.app.App;
import dev.herald.store.webpush.WebPushCredential;
import dev.herald.store.webpush.WebPushSubscription;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.json.JsonMapper;

/**
 * Web Push (RFC 8030) to whichever push service a browser subscribed with: the payload encrypted to
 * the subscription (RFC 8291), a VAPID authorization (RFC 8292) and the TTL, Urgency and Topic
 * headers. Pooled connections per push service host, HTTP/2 where the service offers it over TLS
 * (ALPN), HTTP/1.1 otherwise; no thread per request. In-flight limits, retries, Retry-After and
 * dead-lettering are {@code BatchDelivery}'s, as for every provider. The endpoint was checked when the device
 * registered (https, allowed host, no private address), so it is not re-checked here.
 */
public final class WebPushSender implements ProviderSender, AutoCloseable {
    private static final byte[] EMPTY = new byte[0];

    private final HttpClient https;
    private final HttpClient cleartext;
    private final ConnectionProvider connections;
    private final WebPushEncryption encryption = new WebPushEncryption();
    private final VapidTokens vapid;
    private final WebPushMetrics metrics;
    private final JsonMapper json;
    private final Clock clock;

    public WebPushSender(GatewayProperties.WebPush config, WebPushMetrics metrics, JsonMapper json, Clock clock) {
        this.metrics = metrics;
        this.json = json;
        this.clock = clock;
        this.vapid = new VapidTokens(clock, config.vapidLifetime(), config.subject(), json);
        this.connections = ConnectionProvider.builder("webpush").maxConnections(config.connectionsPerHost())
                .pendingAcquireMaxCount(-1).build();
        HttpClient client = HttpClient.create(connections).responseTimeout(config.requestTimeout());
        this.https = client.protocol(HttpProtocol.H2, HttpProtocol.HTTP11).secure();
        // Only local mode registers http:// endpoints (the provider sandbox): h2c with prior
        // knowledge there, as FcmSender speaks to the same port.
        this.cleartext = client.protocol(HttpProtocol.H2C);
    }

    @Override
    public Channel channel() {
        return Channel.webpush;
    }

    @Override
    public Mono<ProviderResponse> send(App app, PushBatch message, Target target) {
        if (app.webpush().isEmpty()) {
            return Mono.just(ProviderResponse.permanent("NO_WEBPUSH_CREDENTIALS"));
        }
        WebPushCredential credential = app.webpush().get();
        WebPushSubscription subscription;
        byte[] body;
        try {
            subscription = WebPushSubscription.fromToken(target.token());
            body = encryption.encrypt(json.writeValueAsBytes(WebPushPayloads.payload(message)),
                    subscription.publicKey(), subscription.authSecret());
        } catch (IllegalArgumentException unreadable) {
            return Mono.just(ProviderResponse.tokenInvalid("INVALID_SUBSCRIPTION"));
        }
        metrics.encrypted(body.length);
        if (body.length > WebPushEncryption.MAX_BODY_BYTES) {
            return Mono.just(ProviderResponse.permanent("PAYLOAD_TOO_LARGE"));
        }
        URI endpoint = subscription.endpoint();
        String authorization = vapid.authorization(app, credential, endpoint);
        long ttl = Math.max(0, Duration.between(clock.instant(), message.expiresAt()).toSeconds());
        HttpClient http = "https".equalsIgnoreCase(endpoint.getScheme()) ? https : cleartext;
        return http.post()
                .uri(endpoint)
                .send((request, outbound) -> {
                    request.header(HttpHeaderNames.AUTHORIZATION, authorization)
                            .header(HttpHeaderNames.CONTENT_ENCODING, "aes128gcm")
                            .header(HttpHeaderNames.CONTENT_TYPE, "application/octet-stream")
                            .header("TTL", Long.toString(ttl))
                            .header("Urgency", message.priority() == Priority.high ? "high" : "normal");
                    if (message.collapseKey() != null) {
                        request.header("Topic", WebPushPayloads.topic(message.collapseKey()));
                    }
                    return outbound.sendByteArray(Mono.just(body));
                })
                // The body is read (and dropped) so the connection goes back to the pool.
                .responseSingle((response, content) -> content.asByteArray().defaultIfEmpty(EMPTY).map(ignored ->
                        WebPushResponses.read(response.status().code(),
                                response.responseHeaders().get(HttpHeaderNames.RETRY_AFTER))));
    }

    @Override
    public void close() {
        connections.dispose();
    }
}
