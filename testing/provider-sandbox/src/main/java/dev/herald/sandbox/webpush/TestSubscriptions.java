package dev.herald.sandbox.webpush;

import dev.herald.sandbox.SandboxPorts;
import java.net.URI;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Component;

/**
 * The subscriptions this push service issued, by name (the last segment of the endpoint,
 * {@code <origin>/webpush/<name>}), and the last payload each received. A name's prefix scripts its
 * fate as a token's does at FCM and APNs ({@code unregistered-}: 410 Gone, {@code bad-}: 404,
 * {@code throttled<N>-}, {@code flaky<N>-}).
 */
@Component
public class TestSubscriptions {
    static final String PUSH_PATH = "/webpush/";
    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private final SandboxPorts ports;
    private final WebPushProperties properties;
    private final ConcurrentHashMap<String, Issued> issued = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, String> lastPayload = new ConcurrentHashMap<>();

    TestSubscriptions(SandboxPorts ports, WebPushProperties properties) {
        this.ports = ports;
        this.properties = properties;
    }

    /** A subscription's keys and the applicationServerKey it was made with (null: any). */
    record Issued(SubscriptionKeys keys, String applicationServerKey) {
    }

    /** {@code PushSubscription.toJSON()}'s shape. */
    public record Subscription(String name, String endpoint, Map<String, String> keys) {
        public String p256dh() {
            return keys.get("p256dh");
        }

        public String auth() {
            return keys.get("auth");
        }
    }

    /** The origin endpoints name and VAPID tokens must claim as {@code aud}. */
    public String origin() {
        URI origin = properties.origin() != null ? properties.origin() : ports.fcmEndpoint();
        return origin.getScheme() + "://" + origin.getRawAuthority();
    }

    /**
     * Issues subscriptions under {@code names} (one random name when empty). They share one key
     * pair and auth secret, which browsers never do: it lets a benchmark subscribe thousands at
     * the cost of one key. A name issued again gets the new keys.
     *
     * @param applicationServerKey the VAPID public key pushes must be signed with, or null for any
     */
    public List<Subscription> issue(List<String> names, String applicationServerKey) {
        List<String> all = names.isEmpty() ? List.of("sub-" + UUID.randomUUID()) : names;
        SubscriptionKeys keys = SubscriptionKeys.generate();
        List<Subscription> subscriptions = new ArrayList<>(all.size());
        for (String name : all) {
            if (!name.matches("[A-Za-z0-9._~-]{1,200}")) {
                throw new IllegalArgumentException("a subscription name is 1 to 200 of A-Z a-z 0-9 . _ ~ -");
            }
            issued.put(name, new Issued(keys, applicationServerKey));
            subscriptions.add(new Subscription(name, origin() + PUSH_PATH + name,
                    Map.of("p256dh", BASE64URL.encodeToString(keys.publicKey()), "auth", BASE64URL.encodeToString(keys.authSecret()))));
        }
        return subscriptions;
    }

    Issued find(String name) {
        return issued.get(name);
    }

    void received(String name, String payload) {
        lastPayload.put(name, payload);
    }

    /** The last payload the subscription received, decrypted, or null. */
    public String lastPayload(String name) {
        return lastPayload.get(name);
    }

    /** Forgets received payloads (issued subscriptions stay valid). */
    public void reset() {
        lastPayload.clear();
    }
}
