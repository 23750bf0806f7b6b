package dev.herald.sandbox.webpush;

import dev.herald.sandbox.counts.DeliveryCounts;
import dev.herald.sandbox.counts.RequestMetrics;
import dev.herald.sandbox.faults.FaultInjector;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/** Routes the push endpoint on the web server's port ahead of WebFlux, as FCM's send is (the hot path). */
@Configuration(proxyBeanMethods = false)
class WebPushRoutes {

    @Bean
    NettyRouteProvider webPushRoute(TestSubscriptions subscriptions, FaultInjector faults, DeliveryCounts counts,
                                    RequestMetrics metrics, JsonMapper json) {
        WebPushHandler handler = new WebPushHandler(subscriptions, faults, counts, metrics, json);
        return routes -> routes.post(TestSubscriptions.PUSH_PATH + "{name}", handler::push);
    }
}
