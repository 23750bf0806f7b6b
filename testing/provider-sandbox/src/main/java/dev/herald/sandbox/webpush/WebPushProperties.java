package dev.herald.sandbox.webpush;

import java.net.URI;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The sandbox's Web Push service ({@code herald.sandbox.webpush.*}).
 *
 * @param origin {@code scheme://host:port} of issued subscriptions' endpoints, and so the
 *               {@code aud} a VAPID token must name; default {@code http://127.0.0.1:<fcm port>}.
 *               Set it when the gateway reaches the sandbox by another address (a Kubernetes service)
 */
@ConfigurationProperties("herald.sandbox.webpush")
public record WebPushProperties(URI origin) {
}
