package dev.herald.sandbox.fcm;

import dev.herald.sandbox.EventLoops;
import dev.herald.sandbox.counts.DeliveryCounts;
import dev.herald.sandbox.counts.Provider;
import dev.herald.sandbox.counts.RequestMetrics;
import dev.herald.sandbox.faults.Decision;
import dev.herald.sandbox.faults.FaultInjector;
import dev.herald.sandbox.oauth.AccessTokens;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.concurrent.ThreadLocalRandom;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /v1/projects/{projectId}/messages:send}. Order of checks as at Google: the access
 * token, then the body, then the target's fate (token prefix or random fault); every answer,
 * accepted or not, waits out the injected latency on the connection's event loop.
 */
final class FcmHandler {
    static final String MESSAGE_ID_KEY = "herald_message_id";
    private static final String JSON_UTF8 = "application/json; charset=UTF-8";
    private static final byte[] EMPTY = new byte[0];

    private final AccessTokens accessTokens;
    private final FaultInjector faults;
    private final DeliveryCounts counts;
    private final RequestMetrics metrics;
    private final JsonMapper json;
    private final MessageValidator validator;
    private final FcmErrors errors;

    FcmHandler(AccessTokens accessTokens, FaultInjector faults, DeliveryCounts counts, RequestMetrics metrics,
            JsonMapper json) {
        this.accessTokens = accessTokens;
        this.faults = faults;
        this.counts = counts;
        this.metrics = metrics;
        this.json = json;
        this.validator = new MessageValidator(json);
        this.errors = new FcmErrors(json);
    }

    Publisher<Void> send(HttpServerRequest request, HttpServerResponse response) {
        long start = System.nanoTime();
        counts.request();
        String projectId = request.param("projectId");
        boolean authenticated = accessTokens.valid(bearer(request.requestHeaders().get(HttpHeaderNames.AUTHORIZATION)));
        EventLoop loop = EventLoops.of(request);
        return request.receive().aggregate().asByteArray().defaultIfEmpty(EMPTY)
                .map(body -> authenticated ? answer(projectId, body) : errors.unauthenticated)
                .doOnNext(answer -> {
                    if (!answer.accepted()) {
                        counts.rejected(answer.outcome());
                    }
                })
                .flatMap(answer -> faults.delay(answer, loop))
                .flatMap(answer -> {
                    metrics.answered(Provider.fcm, answer.outcome(), start);
                    return respond(response, answer);
                });
    }

    private FcmAnswer answer(String projectId, byte[] body) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (JacksonException e) {
            return errors.invalidArgument("Invalid JSON payload received. Unexpected token.", null);
        }
        JsonNode message = root.path("message");
        String target = target(message);
        long attempt = target == null ? 0 : counts.attempt(target);
        Violation violation = validator.validate(root, body.length);
        if (violation != null) {
            return errors.invalidArgument(violation.message(), violation.field());
        }
        if (root.path("validate_only").asBoolean(false) || root.path("validateOnly").asBoolean(false)) {
            // FCM's dry run: validated, not delivered, and a fixed fake id.
            return FcmAnswer.accepted(name(projectId, "fake_message_id"));
        }
        Decision decision = faults.decide(projectId, target, attempt);
        return switch (decision.fault()) {
            case NONE -> {
                JsonNode messageId = message.path("data").path(MESSAGE_ID_KEY);
                counts.accepted(Provider.fcm, target, messageId.isString() ? messageId.asString() : null);
                yield FcmAnswer.accepted(name(projectId, newMessageId()));
            }
            case UNREGISTERED -> errors.unregistered;
            case BAD_TOKEN -> errors.badToken;
            case TOO_MANY_REQUESTS -> errors.quotaExceeded(decision.retryAfterSeconds());
            case UNAVAILABLE -> errors.unavailable;
        };
    }

    /** What the counts are kept under: the token, or {@code /topics/<name>}, or the condition. */
    private static String target(JsonNode message) {
        if (message.path("token").isString()) {
            return message.path("token").asString();
        }
        if (message.path("topic").isString()) {
            String topic = message.path("topic").asString();
            return topic.startsWith("/topics/") ? topic : "/topics/" + topic;
        }
        return message.path("condition").isString() ? message.path("condition").asString() : null;
    }

    /** {@code {"name":"projects/<p>/messages/<id>"}}, built by hand: it runs for every accepted send. */
    private static String name(String projectId, String id) {
        StringBuilder name = new StringBuilder(64 + projectId.length()).append("{\"name\":\"projects/");
        for (int i = 0; i < projectId.length(); i++) {
            char c = projectId.charAt(i);
            if (c == '"' || c == '\\') {
                name.append('\\').append(c);
            } else if (c < 0x20) {
                name.append(String.format("\\u%04x", (int) c));
            } else {
                name.append(c);
            }
        }
        return name.append("/messages/").append(id).append("\"}").toString();
    }

    /** FCM's id shape, e.g. {@code 0:1500415314455276%31bd1c9631bd1c96}. */
    private static String newMessageId() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return "0:" + (System.currentTimeMillis() * 1000 + random.nextInt(1000)) + "%" + Long.toHexString(random.nextLong());
    }

    private static String bearer(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        return authorization.substring(7).trim();
    }

    private static Mono<Void> respond(HttpServerResponse response, FcmAnswer answer) {
        response.status(answer.status())
                .header(HttpHeaderNames.CONTENT_TYPE, JSON_UTF8)
                .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(answer.body().length));
        if (answer.retryAfter() >= 0) {
            response.header(HttpHeaderNames.RETRY_AFTER, Long.toString(answer.retryAfter()));
        }
        if (answer.status() == 401) {
            response.header(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"https://accounts.google.com/\"");
        }
        return response.sendByteArray(Mono.just(answer.body())).then();
    }
}
