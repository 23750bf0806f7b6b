package dev.herald.store.app;

import java.net.URI;
import java.util.Collection;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The hosts an FCM service account's {@code token_uri} may name ({@code herald.fcm-token-hosts}).
 * The gateway POSTs a signed assertion there, and the service account comes from a tenant: without
 * this rule a tenant could make the gateway call any internal address. One rule for both sides:
 * the dispatcher refuses such an account when it is PUT, the gateway refuses to use one stored
 * before the rule (or the setting) changed.
 */
public record FcmTokenHosts(Set<String> hosts) {

    public FcmTokenHosts {
        hosts = hosts.stream().map(String::strip).filter(h -> !h.isEmpty())
                .map(h -> h.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
    }

    public static FcmTokenHosts of(Collection<String> hosts) {
        return new FcmTokenHosts(Set.copyOf(hosts));
    }

    /** Whether {@code tokenUri} is an absolute URI whose host is one of the allowed. */
    public boolean allows(URI tokenUri) {
        String host = tokenUri == null ? null : tokenUri.getHost();
        return host != null && hosts.contains(host.toLowerCase(Locale.ROOT));
    }

    @Override
    public String toString() {
        return "herald.fcm-token-hosts " + new TreeSet<>(hosts);
    }
}
