package dev.herald.gateway.fcm;

import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.gateway.GatewayProperties;
import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.ProviderSender;
import dev.herald.store.app.App;
import dev.herald.store.app.FcmCredential;
import io.netty.channel.EventLoopGroup;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * FCM HTTP v1 over HTTP/2: a small pool of multiplexed connections carries every request, with
 * no thread per request (the field notes' 100k-at-07:00 lesson) and no channel per request
 * ({@link FcmConnection}). h2c with prior knowledge for an {@code http://} endpoint such as the
 * provider sandbox, TLS with ALPN for {@code https://}.
 */
public final class FcmSender implements ProviderSender, AutoCloseable {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FcmSender.class);

    private final FcmConnectionPool connections;
    private final FcmAccessTokens tokens;
    private final JsonMapper json;
    private final FcmBodies bodies;
    private final Clock clock;
    private final String basePath;
    /** Each project's request path, built once. */
    private final Map<String, String> sendPaths = new ConcurrentHashMap<>();

    public FcmSender(GatewayProperties.Fcm config, FcmAccessTokens tokens, JsonMapper json, Clock clock, EventLoopGroup eventLoops) {
        this(new FcmConnectionPool(config.endpoint(), config.connections(), config.requestTimeout(), eventLoops),
                config, tokens, json, clock);
    }

    FcmSender(FcmConnectionPool connections, GatewayProperties.Fcm config, FcmAccessTokens tokens, JsonMapper json, Clock clock) {
        this.connections = connections;
        this.tokens = tokens;
        this.json = json;
        this.bodies = new FcmBodies(json);
        this.clock = clock;
        String path = config.endpoint().getRawPath();
        this.basePath = path == null ? "" : path.replaceAll("/+$", "");
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
        Mono<String> token;
        try {
            token = tokens.token(app, credential);
        } catch (FcmCredentialException e) {
            log.warn("app {}: {}", app.id(), e.getMessage());
            return Mono.just(ProviderResponse.permanent("FCM_CREDENTIAL_UNUSABLE"));
        }
        String path = sendPaths.computeIfAbsent(credential.projectId(),
                project -> basePath + "/v1/projects/" + project + "/messages:send");
        FcmExchange.Reader reader = (status, retryAfter, text) -> {
            ProviderResponse answer = FcmResponses.read(status, retryAfter, text, json);
            if (status == 401) {
                tokens.invalidate(app);
            }
            return answer;
        };
        return token.flatMap(bearer -> Mono.create(sink ->
                connections.send(new FcmExchange(path, "Bearer " + bearer, body, reader, sink))));
    }

    @Override
    public void close() {
        connections.close();
    }
}
