package dev.herald.gateway.apns;

import com.eatthepath.pushy.apns.DeliveryPriority;
import com.eatthepath.pushy.apns.PushType;
import com.eatthepath.pushy.apns.util.SimpleApnsPushNotification;
import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.contract.payload.ApnsPayloads;
import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.ProviderSender;
import dev.herald.store.app.ApnsCredential;
import dev.herald.store.app.App;
import java.time.Duration;
import java.util.Set;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * APNs through Pushy. Pushy reports a rejection as a normal response and a transport failure as a
 * failed future, which maps straight onto {@link ProviderResponse} and an error signal.
 */
public final class ApnsSender implements ProviderSender {
    /** Reasons after which the token must not be used again. */
    private static final Set<String> DEAD_TOKEN = Set.of("Unregistered", "BadDeviceToken");
    /** Reasons worth retrying: throttling, APNs trouble, and a provider token Pushy will renew. */
    private static final Set<String> TRANSIENT = Set.of("InternalServerError",
            "ServiceUnavailable", "Shutdown", "ExpiredProviderToken");

    private final ApnsClientPool clients;
    private final JsonMapper json;

    public ApnsSender(ApnsClientPool clients, JsonMapper json) {
        this.clients = clients;
        this.json = json;
    }

    @Override
    public Channel channel() {
        return Channel.apns;
    }

    @Override
    public Mono<ProviderResponse> send(App app, PushBatch message, Target target) {
        if (app.apns().isEmpty()) {
            return Mono.just(ProviderResponse.permanent("NO_APNS_CREDENTIALS"));
        }
        ApnsCredential credential = app.apns().get();
        boolean alert = ApnsPayloads.alert(message);
        SimpleApnsPushNotification notification = new SimpleApnsPushNotification(
                target.token(), credential.topic(), json.writeValueAsString(ApnsPayloads.payload(message)),
                message.expiresAt(),
                ApnsPayloads.immediate(message) ? DeliveryPriority.IMMEDIATE : DeliveryPriority.CONSERVE_POWER,
                alert ? PushType.ALERT : PushType.BACKGROUND,
                message.collapseKey());
        return Mono.defer(() -> Mono.fromFuture(clients.client(app, credential).sendNotification(notification)))
                .map(response -> {
                    if (response.isAccepted()) {
                        return ProviderResponse.ACCEPTED;
                    }
                    String reason = response.getRejectionReason().orElse("HTTP_" + response.getStatusCode());
                    if (DEAD_TOKEN.contains(reason)) {
                        return ProviderResponse.tokenInvalid(reason);
                    }
                    if (response.getStatusCode() == 429) { // TooManyRequests; TooManyProviderTokenUpdates is 429 too
                        return ProviderResponse.throttled(reason, Duration.ZERO);
                    }
                    if (TRANSIENT.contains(reason) || response.getStatusCode() >= 500) {
                        return ProviderResponse.retry(reason, Duration.ZERO);
                    }
                    return ProviderResponse.permanent(reason);
                });
    }
}
