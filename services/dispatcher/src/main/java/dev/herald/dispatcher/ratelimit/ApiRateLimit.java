package dev.herald.dispatcher.ratelimit;

import dev.herald.dispatcher.DispatcherProperties;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.quota.RateBuckets;
import dev.herald.store.quota.RateBuckets.Grant;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Clock;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Counts every app API request against the app's rate ({@code apiPerSecond} of its limits, else
 * {@code herald.dispatcher.api-rate-limit}), after authentication (so a stranger cannot spend an
 * app's tokens) and before the body is read; tokens come from Redis a lease at a time
 * ({@link ApiTokenLeases}). Over the rate: 429 with Retry-After in whole seconds,
 * and {@code herald.dispatcher.rate.limited} counts it. Admin calls are not limited.
 */
@Configuration(proxyBeanMethods = false)
public class ApiRateLimit implements WebMvcConfigurer, HandlerInterceptor {
    private final ApiTokenLeases leases;
    private final long defaultPerSecond;
    private final MeterRegistry registry;

    ApiRateLimit(RateBuckets buckets, Clock clock, DispatcherProperties properties, MeterRegistry registry) {
        this.leases = new ApiTokenLeases(buckets, clock);
        this.defaultPerSecond = properties.apiRateLimit();
        this.registry = registry;
    }

    @Override
    public void addInterceptors(InterceptorRegistry interceptors) {
        interceptors.addInterceptor(this).addPathPatterns("/v1/**").order(1); // after authentication (order 0)
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (!(request.getAttribute(AuthenticatedApp.ATTRIBUTE) instanceof AuthenticatedApp app)) {
            return true; // an admin call, or no handler
        }
        Long own = app.app().limits().apiPerSecond();
        long perSecond = own != null ? own : defaultPerSecond;
        if (perSecond <= 0) {
            return true;
        }
        Grant grant = leases.take(app.id(), perSecond);
        if (grant.granted() == 0) {
            Counter.builder("herald.dispatcher.rate.limited").description("App API requests answered 429")
                    .tag("app", app.id()).register(registry).increment();
            long seconds = Math.max(1, (grant.nextTokenIn().toMillis() + 999) / 1000);
            throw Problems.tooManyRequests("app " + app.id() + " is over its rate of " + perSecond
                    + " API requests a second; retry after " + seconds + " s", seconds);
        }
        return true;
    }
}
