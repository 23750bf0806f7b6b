package dev.herald.sandbox.fcm;

import dev.herald.sandbox.counts.DeliveryCounts;
import dev.herald.sandbox.counts.RequestMetrics;
import dev.herald.sandbox.faults.FaultInjector;
import dev.herald.sandbox.oauth.AccessTokens;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/**
 * Routes FCM's send endpoint on the web server's port as a plain Reactor Netty route, ahead of
 * WebFlux. Why: it is the hot path (10k requests/s on two cores), and skipping WebFlux's
 * dispatching, codecs and per-request observation roughly halves its CPU cost. Everything else
 * on the port ({@code /token}, {@code /sandbox}, {@code /actuator}) falls through to WebFlux.
 */
@Configuration(proxyBeanMethods = false)
class FcmRoutes {
    static final String SEND_PATH = "/v1/projects/{projectId}/messages:send";

    @Bean
    NettyRouteProvider fcmSendRoute(AccessTokens tokens, FaultInjector faults, DeliveryCounts counts,
            RequestMetrics metrics, JsonMapper json) {
        FcmHandler handler = new FcmHandler(tokens, faults, counts, metrics, json);
        return routes -> routes.post(SEND_PATH, handler::send);
    }
}
