package dev.herald.gateway.fcm;

import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.gateway.GatewayProperties;
import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.ProviderSender;
import dev.herald.store.app.App;
import dev.herald.store.app.FcmCredential;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.net.URI;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.json.JsonMapper;

/**
 * FCM HTTP v1 over HTTP/2: a small pool of multiplexed connections carries every request, with
 * no thread per request (the field notes' 100k-at-07:00 lesson). h2c with prior knowledge for an
 * {@code http://} endpoint such as the provider sandbox, TLS with ALPN for {@code https://}.
 */
public final class FcmSender implements ProviderSender, AutoCloseable {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FcmSender.class);

    private final HttpClient http;
    private final ConnectionProvider connections;
    private final FcmAccessTokens tokens;
    private final JsonMapper json;
    private final FcmBodies bodies;
    private final Clock clock;
    private final String endpoint;
    /** Each project's send URI, parsed once: a URI string is parsed (by regular expression) per request. */
    private final Map<String, URI> sendUris = new ConcurrentHashMap<>();

    public FcmSender(GatewayProperties.Fcm config, FcmAccessTokens tokens, JsonMapper json, Clock clock) {
        this.tokens = tokens;
        this.json = json;
        this.bodies = new FcmBodies(json);
        this.clock = clock;
        this.endpoint = config.endpoint().toString().replaceAll("/+$", "");
        this.connections = ConnectionProvider.builder("fcm").maxConnections(config.connections())
                .pendingAcquireMaxCount(-1).build();
        boolean tls = "https".equalsIgnoreCase(config.endpoint().getScheme());
        HttpClient client = HttpClient.create(connections)
                .protocol(tls ? HttpProtocol.H2 : HttpProtocol.H2C)
                .responseTimeout(config.requestTimeout())
                .headers(headers -> headers.set(HttpHeaderNames.CONTENT_TYPE, "application/json; charset=UTF-8"));
        this.http = tls ? client.secure() : client;
    }

    @Override
    public Channel channel() {
        return Channel.fcm;
    }

    @Override
    public Mono<ProviderResponse> send(App app, PushBatch message, Target target) {
        if (app.fcm().isEmpty()) {
            return Mono.just(ProviderResponse.permanent("NO_FCM_CREDENTIALS"));
        }
        FcmCredential credential = app.fcm().get();
        byte[] body = bodies.body(message, target, clock.instant());
        // Per-request headers are set on the request, not with HttpClient.headers(): that would copy
        // the client's configuration for every push.
        Mono<String> token;
        try {
            token = tokens.token(app, credential);
        } catch (FcmCredentialException e) {
            log.warn("app {}: {}", app.id(), e.getMessage());
            return Mono.just(ProviderResponse.permanent("FCM_CREDENTIAL_UNUSABLE"));
        }
        return token.flatMap(bearer -> http
                .post()
                .uri(sendUris.computeIfAbsent(credential.projectId(),
                        project -> URI.create(endpoint + "/v1/projects/" + project + "/messages:send")))
                .send((request, outbound) -> {
                    request.header(HttpHeaderNames.AUTHORIZATION, "Bearer " + bearer);
                    return outbound.sendByteArray(Mono.just(body));
                })
                // An accepted push's body (the message's name) is not read: only errors need theirs.
                .response((response, content) -> response.status().code() == 200
                        ? content.then(Mono.just(ProviderResponse.ACCEPTED))
                        : content.aggregate().asString().defaultIfEmpty("").map(text -> {
                            ProviderResponse answer = FcmResponses.read(response.status().code(),
                                    response.responseHeaders().get(HttpHeaderNames.RETRY_AFTER), text, json);
                            if (response.status().code() == 401) {
                                tokens.invalidate(app);
                            }
                            return answer;
                        }))
                .single());
    }

    @Override
    public void close() {
        connections.dispose();
    }
}
