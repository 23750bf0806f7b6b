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
import io.netty.util.AsciiString;
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
    /**
     * Each project's request path, and each app's authorization header for its current access
     * token, built once: HPACK looks a header up among those it sent before by comparing values,
     * at once when it is the same AsciiString, character by character for a new String (the
     * gateway's top two self frames in the fan-out profile, docs/perf/, were String.charAt and
     * AsciiString.contentEquals).
     */
    private final Map<String, AsciiString> sendPaths = new ConcurrentHashMap<>();
    private final Map<String, Authorization> authorizations = new ConcurrentHashMap<>();

    private record Authorization(String bearer, AsciiString header) {
    }

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
        AsciiString path = sendPaths.computeIfAbsent(credential.projectId(),
                project -> AsciiString.of(basePath + "/v1/projects/" + project + "/messages:send"));
        FcmExchange.Reader reader = (status, retryAfter, text) -> {
            ProviderResponse answer = FcmResponses.read(status, retryAfter, text, json);
            if (status == 401) {
                tokens.invalidate(app);
            }
            return answer;
        };
        return token.flatMap(bearer -> {
            AsciiString authorization = authorization(app.id(), bearer);
            return Mono.create(sink -> connections.send(new FcmExchange(path, authorization, body, reader, sink)));
        });
    }

    private AsciiString authorization(String appId, String bearer) {
        Authorization current = authorizations.get(appId);
        if (current == null || !current.bearer().equals(bearer)) {
            current = new Authorization(bearer, AsciiString.of("Bearer " + bearer));
            authorizations.put(appId, current);
        }
        return current.header();
    }

    @Override
    public void close() {
        connections.close();
    }
}
