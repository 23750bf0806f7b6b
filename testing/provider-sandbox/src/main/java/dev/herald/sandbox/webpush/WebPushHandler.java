package dev.herald.sandbox.webpush;

import dev.herald.sandbox.EventLoops;
import dev.herald.sandbox.counts.DeliveryCounts;
import dev.herald.sandbox.counts.Provider;
import dev.herald.sandbox.counts.RequestMetrics;
import dev.herald.sandbox.faults.Decision;
import dev.herald.sandbox.faults.FaultInjector;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /webpush/{name}}. Checks in a push service's order: the subscription exists, the
 * request is a Web Push request (TTL, aes128gcm, at most 4096 bytes), the VAPID authorization, the
 * subscription's scripted or random fate, then the payload decrypts. Accepted: 201 with a
 * {@code Location}, as RFC 8030 says.
 */
final class WebPushHandler {
    static final int MAX_BODY_BYTES = 4096;
    private static final byte[] EMPTY = new byte[0];

    private final TestSubscriptions subscriptions;
    private final VapidCheck vapid;
    private final FaultInjector faults;
    private final DeliveryCounts counts;
    private final RequestMetrics metrics;
    private final JsonMapper json;

    WebPushHandler(TestSubscriptions subscriptions, FaultInjector faults, DeliveryCounts counts, RequestMetrics metrics,
                   JsonMapper json) {
        this.subscriptions = subscriptions;
        this.vapid = new VapidCheck(json);
        this.faults = faults;
        this.counts = counts;
        this.metrics = metrics;
        this.json = json;
    }

    /** An answer: status, the reason counted and tagged (accepted or why not), Retry-After seconds (-1: none). */
    record Answer(int status, String outcome, long retryAfter) {
        static Answer of(int status, String outcome) {
            return new Answer(status, outcome, -1);
        }

        boolean accepted() {
            return status == 201;
        }
    }

    Publisher<Void> push(HttpServerRequest request, HttpServerResponse response) {
        long start = System.nanoTime();
        counts.request();
        String name = request.param("name");
        HttpHeaders headers = request.requestHeaders();
        EventLoop loop = EventLoops.of(request);
        return request.receive().aggregate().asByteArray().defaultIfEmpty(EMPTY)
                .map(body -> answer(name, headers, body))
                .doOnNext(answer -> {
                    if (!answer.accepted()) {
                        counts.rejected(answer.outcome());
                    }
                })
                .flatMap(answer -> faults.delay(answer, loop))
                .flatMap(answer -> {
                    metrics.answered(Provider.webpush, answer.outcome(), start);
                    response.status(answer.status()).header(HttpHeaderNames.CONTENT_LENGTH, "0");
                    if (answer.accepted()) {
                        response.header(HttpHeaderNames.LOCATION, "/webpush/messages/" + UUID.randomUUID());
                    }
                    if (answer.retryAfter() >= 0) {
                        response.header(HttpHeaderNames.RETRY_AFTER, Long.toString(answer.retryAfter()));
                    }
                    return response.send().then();
                });
    }

    private Answer answer(String name, HttpHeaders headers, byte[] body) {
        TestSubscriptions.Issued subscription = subscriptions.find(name);
        if (subscription == null) {
            return Answer.of(404, "NOT_FOUND");
        }
        if (body.length > MAX_BODY_BYTES) {
            return Answer.of(413, "PAYLOAD_TOO_LARGE");
        }
        if (headers.get("TTL") == null || !headers.get("TTL").matches("[0-9]{1,10}")) {
            return Answer.of(400, "TTL_MISSING");
        }
        if (body.length > 0 && !"aes128gcm".equalsIgnoreCase(headers.get(HttpHeaderNames.CONTENT_ENCODING))) {
            return Answer.of(415, "ENCODING_UNSUPPORTED");
        }
        Object checked = vapid.check(headers.get(HttpHeaderNames.AUTHORIZATION), subscriptions.origin(),
                subscription.applicationServerKey(), System.currentTimeMillis() / 1000);
        if (checked instanceof VapidCheck.Refusal refusal) {
            return Answer.of(refusal.status(), refusal.reason());
        }
        long attempt = counts.attempt(name);
        Decision decision = faults.decide(((VapidCheck.Verified) checked).publicKey(), name, attempt);
        return switch (decision.fault()) {
            case NONE -> delivered(name, subscription, body);
            case UNREGISTERED -> Answer.of(410, "GONE");
            case BAD_TOKEN -> Answer.of(404, "NOT_FOUND");
            case TOO_MANY_REQUESTS -> new Answer(429, "TOO_MANY_REQUESTS", decision.retryAfterSeconds());
            case UNAVAILABLE -> Answer.of(503, "UNAVAILABLE");
        };
    }

    private Answer delivered(String name, TestSubscriptions.Issued subscription, byte[] body) {
        String payload = "";
        if (body.length > 0) {
            try {
                payload = new String(PayloadDecryption.decrypt(body, subscription.keys()), StandardCharsets.UTF_8);
            } catch (PayloadDecryption.Undecryptable e) {
                return Answer.of(400, "UNDECRYPTABLE");
            }
        }
        subscriptions.received(name, payload);
        counts.accepted(Provider.webpush, name, messageId(payload));
        return Answer.of(201, "accepted");
    }

    /** {@code data.herald_message_id} of a Herald payload, for duplicate counting; null for others. */
    private String messageId(String payload) {
        try {
            JsonNode id = json.readTree(payload).path("data").path("herald_message_id");
            return id.isString() ? id.asString() : null;
        } catch (JacksonException | IllegalArgumentException notJson) {
            return null;
        }
    }
}
