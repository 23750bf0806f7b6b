package dev.herald.dispatcher.device;

import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Which Web Push endpoints a device may register ({@code herald.dispatcher.webpush.*}). An endpoint
 * is a URL the gateway will POST to, given by whoever holds an app's API key: checked here so the
 * gateway cannot be pointed at internal services (SSRF).
 *
 * @param allowedHosts push service hosts an endpoint may name; an entry starting with a dot allows
 *                     the host's subdomains. Default: the push services of Chrome, Edge (and every
 *                     browser on FCM), Firefox and Safari. Empty: any host that passes the other checks
 * @param deniedHosts  hosts refused even when allowed (same forms)
 * @param allowLocal   accept {@code http://} endpoints and hosts that resolve to loopback or private
 *                     addresses: only for local mode against the provider sandbox, never in production
 */
@ConfigurationProperties("herald.dispatcher.webpush")
public record WebPushEndpointProperties(
        @DefaultValue({"fcm.googleapis.com", ".notify.windows.com", "updates.push.services.mozilla.com", "web.push.apple.com"})
        List<String> allowedHosts,
        List<String> deniedHosts,
        @DefaultValue("false") boolean allowLocal) {

    public WebPushEndpointProperties {
        allowedHosts = allowedHosts == null ? List.of() : allowedHosts.stream().map(String::strip).filter(h -> !h.isEmpty()).toList();
        deniedHosts = deniedHosts == null ? List.of() : deniedHosts.stream().map(String::strip).filter(h -> !h.isEmpty()).toList();
    }
}
