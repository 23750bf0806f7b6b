package dev.herald.dispatcher.device;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.web.ErrorResponseException;

class WebPushEndpointsTests {
    /** A DNS of the test's own: names that resolve to public or private addresses, or not at all. */
    private static final Map<String, String> DNS = Map.of(
            "fcm.googleapis.com", "142.250.185.10",
            "wns2-par02p.notify.windows.com", "20.199.120.182",
            "rebound.fcm.googleapis.com", "10.0.0.5",
            "updates.push.services.mozilla.com", "34.117.65.55");

    private static WebPushEndpoints endpoints(List<String> allowed, List<String> denied, boolean local) {
        return new WebPushEndpoints(new WebPushEndpointProperties(allowed, denied, local), host -> {
            String address = DNS.get(host);
            if (address == null) {
                throw new UnknownHostException(host);
            }
            return new InetAddress[] {InetAddress.getByName(address)};
        });
    }

    private static final WebPushEndpoints DEFAULTS = endpoints(
            List.of("fcm.googleapis.com", ".notify.windows.com", "updates.push.services.mozilla.com", "web.push.apple.com"), List.of(), false);

    @Test
    void thePushServicesOfTheBigBrowsersAreTakenByDefault() {
        assertThat(DEFAULTS.check("https://fcm.googleapis.com/fcm/send/abc:APA91b")).hasHost("fcm.googleapis.com");
        assertThat(DEFAULTS.check("https://wns2-par02p.notify.windows.com/w/?token=x")).hasScheme("https");
        assertThat(DEFAULTS.check("https://updates.push.services.mozilla.com/wpush/v2/gAAAA")).hasScheme("https");
    }

    @Test
    void otherHostsDeniedHostsAndHostsResolvingToPrivateAddressesAreRefused() {
        assertRefused(DEFAULTS, "https://evil.example/steal", "not an allowed push service");
        assertRefused(DEFAULTS, "https://notify.windows.com.evil.example/x", "not an allowed push service");
        assertRefused(endpoints(List.of(".googleapis.com"), List.of(), false), "https://rebound.fcm.googleapis.com/x", "10.0.0.5");
        assertRefused(endpoints(List.of(), List.of("fcm.googleapis.com"), false), "https://fcm.googleapis.com/x", "refuses");
        assertRefused(endpoints(List.of(), List.of(), false), "https://unknown.example/x", "does not resolve");
        assertRefused(DEFAULTS, "http://fcm.googleapis.com/fcm/send/x", "https");
        assertRefused(DEFAULTS, "https://user:pw@fcm.googleapis.com/x", "user info");
    }

    @Test
    void localModeTakesHttpAndLoopbackForTheSandbox() {
        WebPushEndpoints local = endpoints(List.of(), List.of(), true);
        assertThat(local.check("http://127.0.0.1:9090/webpush/sub-1")).hasPort(9090);
    }

    @Test
    void mappedAndSpecialAddressesAreNotPublic() throws Exception {
        for (String address : List.of("::ffff:10.1.2.3", "0.0.0.0", "192.0.0.8", "224.0.0.1", "fe80::1", "100.100.0.1")) {
            assertThat(WebPushEndpoints.isPublic(InetAddress.getByName(address))).as(address).isFalse();
        }
        assertThat(WebPushEndpoints.isPublic(InetAddress.getByName("2a00:1450:4007:80e::200a"))).isTrue();
    }

    private static void assertRefused(WebPushEndpoints endpoints, String endpoint, String why) {
        assertThatThrownBy(() -> endpoints.check(endpoint)).isInstanceOf(ErrorResponseException.class)
                .satisfies(e -> assertThat(((ErrorResponseException) e).getBody().getDetail()).contains(why));
    }
}
