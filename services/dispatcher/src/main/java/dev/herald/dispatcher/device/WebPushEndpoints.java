package dev.herald.dispatcher.device;

import dev.herald.dispatcher.problem.Problems;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Checks a Web Push endpoint before it is stored: https, a host the allow-list takes and the
 * deny-list does not, and (unless local mode) every address the host resolves to is public:
 * not loopback, private, link-local, carrier-grade NAT, unique-local, multicast or unspecified.
 * Refusals are 400s naming {@code subscription.endpoint}.
 */
public final class WebPushEndpoints {
    static final String FIELD = "subscription.endpoint";
    private static final int MAX_LENGTH = 2048;

    private final WebPushEndpointProperties properties;
    private final Resolver resolver;

    /** Host name to addresses; the system resolver outside tests. */
    @FunctionalInterface
    public interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    public WebPushEndpoints(WebPushEndpointProperties properties, Resolver resolver) {
        this.properties = properties;
        this.resolver = resolver;
    }

    /** The endpoint as a URI, or a 400 saying what is wrong with it. */
    public URI check(String endpoint) {
        if (endpoint == null || endpoint.isBlank()) {
            throw refused("is required");
        }
        if (endpoint.length() > MAX_LENGTH) {
            throw refused("must be at most " + MAX_LENGTH + " characters");
        }
        URI uri;
        try {
            uri = new URI(endpoint);
        } catch (URISyntaxException e) {
            throw refused("is not a URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !(properties.allowLocal() && scheme.equals("http"))) {
            throw refused("must be an https:// URL");
        }
        if (uri.getHost() == null || uri.getRawUserInfo() != null || uri.getRawFragment() != null) {
            throw refused("must be an https:// URL with a host, and no user info or fragment");
        }
        String host = hostOf(uri);
        if (matches(host, properties.deniedHosts())) {
            throw refused("names a push service host this Herald refuses (" + host + ")");
        }
        if (!properties.allowedHosts().isEmpty() && !matches(host, properties.allowedHosts())) {
            throw refused("names a host that is not an allowed push service (" + host
                    + "); allowed: " + String.join(", ", properties.allowedHosts()));
        }
        if (!properties.allowLocal()) {
            checkPublic(host);
        }
        return uri;
    }

    private void checkPublic(String host) {
        InetAddress[] addresses;
        try {
            addresses = resolver.resolve(host);
        } catch (UnknownHostException e) {
            throw refused("names a host that does not resolve (" + host + ")");
        }
        for (InetAddress address : addresses) {
            if (!isPublic(address)) {
                throw refused("resolves to a private, loopback or otherwise non-public address (" + address.getHostAddress()
                        + "); push services are on the public internet");
            }
        }
    }

    static boolean isPublic(InetAddress address) {
        if (address.isLoopbackAddress() || address.isSiteLocalAddress() || address.isLinkLocalAddress()
                || address.isAnyLocalAddress() || address.isMulticastAddress()) {
            return false;
        }
        byte[] bytes = address.getAddress();
        if (address instanceof Inet4Address) {
            int first = Byte.toUnsignedInt(bytes[0]);
            int second = Byte.toUnsignedInt(bytes[1]);
            return first != 0 && !(first == 100 && second >= 64 && second < 128) // carrier-grade NAT
                    && !(first == 169 && second == 254) && !(first == 192 && second == 0 && bytes[2] == 0)
                    && first < 224; // 224/4 multicast and 240/4 reserved
        }
        if (address instanceof Inet6Address) {
            boolean uniqueLocal = (bytes[0] & 0xfe) == 0xfc; // fc00::/7
            boolean mappedV4 = isMappedV4(bytes);
            if (mappedV4) {
                try {
                    return isPublic(InetAddress.getByAddress(Arrays.copyOfRange(bytes, 12, 16)));
                } catch (UnknownHostException impossible) {
                    return false;
                }
            }
            return !uniqueLocal;
        }
        return false;
    }

    private static boolean isMappedV4(byte[] bytes) {
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
    }

    private static String hostOf(URI uri) {
        String host = uri.getHost().toLowerCase(Locale.ROOT);
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    private static boolean matches(String host, List<String> entries) {
        for (String entry : entries) {
            String pattern = entry.toLowerCase(Locale.ROOT);
            if (pattern.startsWith(".") ? host.endsWith(pattern) : host.equals(pattern)) {
                return true;
            }
        }
        return false;
    }

    private static RuntimeException refused(String message) {
        return Problems.invalidField(FIELD, message);
    }
}
