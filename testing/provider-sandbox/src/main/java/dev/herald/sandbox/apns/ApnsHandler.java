package dev.herald.sandbox.apns;

import dev.herald.sandbox.EventLoops;
import dev.herald.sandbox.counts.DeliveryCounts;
import dev.herald.sandbox.counts.Provider;
import dev.herald.sandbox.counts.RequestMetrics;
import dev.herald.sandbox.faults.Decision;
import dev.herald.sandbox.faults.FaultInjector;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Answers {@code POST /3/device/{token}} like APNs: provider token, headers and payload are
 * checked in Apple's order, then the token's fault decides, then the answer waits out the
 * injected latency on the connection's event loop. Never blocks.
 */
final class ApnsHandler {
    static final String MESSAGE_ID_KEY = "herald_message_id";
    private static final String PATH_PREFIX = "/3/device/";
    private static final int MAX_PAYLOAD_BYTES = 4096;
    /** Apple allows VoIP pushes a larger payload. */
    private static final int MAX_VOIP_PAYLOAD_BYTES = 5120;
    private static final int MAX_COLLAPSE_ID_BYTES = 64;
    private static final Set<String> PUSH_TYPES = Set.of("alert", "background", "location", "voip", "complication",
            "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets", "controls");
    /** Apple's apns-id is a canonical UUID: 8-4-4-4-12 hex digits. */
    private static final Pattern UUID_TEXT = Pattern.compile(
            "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
    private static final byte[] EMPTY = new byte[0];

    private final ProviderTokens providerTokens;
    private final FaultInjector faults;
    private final DeliveryCounts counts;
    private final RequestMetrics metrics;
    private final JsonMapper json;

    ApnsHandler(JsonMapper json, FaultInjector faults, DeliveryCounts counts, RequestMetrics metrics) {
        this.json = json;
        this.providerTokens = new ProviderTokens(json);
        this.faults = faults;
        this.counts = counts;
        this.metrics = metrics;
    }

    Publisher<Void> handle(HttpServerRequest request, HttpServerResponse response) {
        long start = System.nanoTime();
        counts.request();
        EventLoop loop = EventLoops.of(request);
        return request.receive().aggregate().asByteArray().defaultIfEmpty(EMPTY)
                .map(payload -> answer(request, payload))
                .flatMap(answer -> faults.delay(answer, loop))
                .flatMap(answer -> {
                    metrics.answered(Provider.apns, answer.outcome(), start);
                    response.status(answer.status()).header("apns-id", answer.apnsId());
                    if (answer.reason() == null) {
                        return response.send();
                    }
                    return response.header("content-type", "application/json")
                            .sendString(Mono.just(answer.body()), StandardCharsets.UTF_8).then();
                });
    }

    private ApnsAnswer answer(HttpServerRequest request, byte[] payload) {
        ApnsAnswer answer = decide(request, payload);
        if (answer.reason() != null) {
            counts.rejected(answer.reason().name());
        }
        return answer;
    }

    private ApnsAnswer decide(HttpServerRequest request, byte[] payload) {
        HttpHeaders headers = request.requestHeaders();
        String requestedId = headers.get("apns-id");
        if (requestedId != null && !UUID_TEXT.matcher(requestedId).matches()) {
            return ApnsAnswer.rejected(randomUuid(), ApnsReason.BadMessageId);
        }
        String apnsId = requestedId != null ? requestedId : randomUuid();
        if (!HttpMethod.POST.equals(request.method())) {
            return ApnsAnswer.rejected(apnsId, ApnsReason.MethodNotAllowed);
        }
        String path = request.uri();
        if (!path.startsWith(PATH_PREFIX)) {
            return ApnsAnswer.rejected(apnsId, ApnsReason.BadPath);
        }
        String token = path.substring(PATH_PREFIX.length());
        if (token.isEmpty()) {
            return ApnsAnswer.rejected(apnsId, ApnsReason.MissingDeviceToken);
        }
        ApnsReason authentication = providerTokens.check(headers.get("authorization"));
        if (authentication != null) {
            return ApnsAnswer.rejected(apnsId, authentication);
        }
        long attempt = counts.attempt(token);
        ApnsReason invalid = invalidHeaders(headers);
        if (invalid == null) {
            invalid = invalidSize(payload, "voip".equals(headers.get("apns-push-type")));
        }
        if (invalid != null) {
            return ApnsAnswer.rejected(apnsId, invalid);
        }
        JsonNode root = parse(payload);
        if (root == null) {
            return ApnsAnswer.rejected(apnsId, ApnsReason.BadPayload);
        }
        Decision decision = faults.decide(headers.get("apns-topic"), token, attempt);
        return switch (decision.fault()) {
            case NONE -> {
                counts.accepted(Provider.apns, token, messageId(root));
                yield ApnsAnswer.accepted(apnsId);
            }
            case UNREGISTERED -> ApnsAnswer.rejected(apnsId, ApnsReason.Unregistered);
            case BAD_TOKEN -> ApnsAnswer.rejected(apnsId, ApnsReason.BadDeviceToken);
            case TOO_MANY_REQUESTS -> ApnsAnswer.rejected(apnsId, ApnsReason.TooManyRequests);
            case UNAVAILABLE -> ApnsAnswer.rejected(apnsId, ApnsReason.ServiceUnavailable);
        };
    }

    private static ApnsReason invalidHeaders(HttpHeaders headers) {
        String topic = headers.get("apns-topic");
        if (topic == null || topic.isBlank()) {
            return ApnsReason.MissingTopic;
        }
        String priority = headers.get("apns-priority");
        if (priority != null && !(priority.equals("10") || priority.equals("5") || priority.equals("1"))) {
            return ApnsReason.BadPriority;
        }
        String pushType = headers.get("apns-push-type");
        if (pushType != null && !PUSH_TYPES.contains(pushType)) {
            return ApnsReason.InvalidPushType;
        }
        String expiration = headers.get("apns-expiration");
        if (expiration != null && !isLong(expiration)) {
            return ApnsReason.BadExpirationDate;
        }
        String collapseId = headers.get("apns-collapse-id");
        if (collapseId != null && collapseId.getBytes(StandardCharsets.UTF_8).length > MAX_COLLAPSE_ID_BYTES) {
            return ApnsReason.BadCollapseId;
        }
        return null;
    }

    private static ApnsReason invalidSize(byte[] payload, boolean voip) {
        if (payload.length == 0) {
            return ApnsReason.PayloadEmpty;
        }
        return payload.length > (voip ? MAX_VOIP_PAYLOAD_BYTES : MAX_PAYLOAD_BYTES) ? ApnsReason.PayloadTooLarge : null;
    }

    /** The payload if it is a JSON object with an {@code aps} dictionary, else null. */
    private JsonNode parse(byte[] payload) {
        try {
            JsonNode root = json.readTree(payload);
            return root.isObject() && root.path("aps").isObject() ? root : null;
        } catch (JacksonException e) {
            return null;
        }
    }

    /** The platform's message id at the payload's top level, if any. */
    private static String messageId(JsonNode payload) {
        JsonNode id = payload.path(MESSAGE_ID_KEY);
        return id.isValueNode() ? id.asString() : null;
    }

    private static boolean isLong(String text) {
        try {
            Long.parseLong(text);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** A version-4 UUID without {@link UUID#randomUUID()}'s shared SecureRandom, which contends at 10k/s. */
    private static String randomUuid() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long most = (random.nextLong() & ~0xF000L) | 0x4000L;
        long least = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(most, least).toString();
    }
}
