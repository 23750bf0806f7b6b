package dev.herald.dispatcher.problem;

import dev.herald.dispatcher.DispatcherProperties;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import org.apache.catalina.Valve;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.accept.ContentNegotiationStrategy;
import org.springframework.web.accept.HeaderContentNegotiationStrategy;
import org.springframework.web.servlet.config.annotation.ContentNegotiationConfigurer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.type.LogicalType;

/**
 * Installs the request size limit in front of the API, JSON read as strictly as the OpenAPI document
 * types it, answers in JSON whatever Accept says and each written whole ({@link SizedJsonAnswers}),
 * and problems for errors Tomcat raises itself.
 */
@Configuration(proxyBeanMethods = false)
public class ProblemConfiguration implements WebMvcConfigurer {
    private static final String API = "/v1/";

    @Bean
    FilterRegistrationBean<RequestSizeLimitFilter> requestSizeLimitFilter(DispatcherProperties properties, JsonMapper json) {
        FilterRegistrationBean<RequestSizeLimitFilter> registration =
                new FilterRegistrationBean<>(new RequestSizeLimitFilter(properties.maxRequestSize().toBytes(), json));
        registration.addUrlPatterns("/v1/*");
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 100);
        return registration;
    }

    /**
     * A JSON value of the wrong type is a 400 naming the field, not silently converted: Jackson would
     * otherwise read {@code "id": false} as the string "false", {@code "ttl": "60"} as 60 and
     * {@code "ttl": 1.5} as 1 ({@link IntegralNumbers}), {@code "channel": 0} as an enum's first constant,
     * and {@code "sendAt": 0} as an epoch second ({@link TextualTimes}).
     */
    @Bean
    JsonMapperBuilderCustomizer scalarsAsTyped() {
        return builder -> builder
                .addModule(IntegralNumbers.module())
                .addModule(TextualTimes.module())
                .withCoercionConfig(LogicalType.Textual, config -> config
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.Integer, config -> config
                        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.Float, config -> config
                        .setCoercion(CoercionInputShape.String, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.Boolean, config -> config
                        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail))
                // "channel": 0 would otherwise be the enum's first constant (fcm).
                .withCoercionConfig(LogicalType.Enum, config -> config
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail))
                // "sendAt": "" would otherwise be read as absent (a send now), not as the malformed time it is.
                .withCoercionConfig(LogicalType.DateTime, config -> config
                        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail));
    }

    /** Spring Boot's JSON converter gives way to this one, for answers and problems alike. */
    @Bean
    SizedJsonAnswers sizedJsonAnswers(JsonMapper json) {
        return new SizedJsonAnswers(json);
    }

    /**
     * The API ({@code /v1}) has one representation, JSON (problems in application/problem+json), so it
     * disregards Accept, as RFC 9110 lets a server do: answered as if the client had sent none. Spring
     * negotiates after the handler ran, so an Accept the answer does not match was a 406 for a call
     * whose work was already done (a device registered, a message queued), which the client would
     * then repeat. Elsewhere (the actuator's Prometheus formats) Accept still chooses.
     */
    @Override
    public void configureContentNegotiation(ContentNegotiationConfigurer configurer) {
        HeaderContentNegotiationStrategy headers = new HeaderContentNegotiationStrategy();
        configurer.strategies(List.of(request -> {
            HttpServletRequest servlet = request.getNativeRequest(HttpServletRequest.class);
            return servlet != null && servlet.getRequestURI().startsWith(API)
                    ? ContentNegotiationStrategy.MEDIA_TYPE_ALL_LIST : headers.resolveMediaTypes(request);
        }));
    }

    /** Replaces Tomcat's HTML error report (and Boot's copy of it) with {@link ProblemErrorReportValve}. */
    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> problemErrorReports() {
        return factory -> factory.addContextCustomizers(context -> {
            if (context.getParent() instanceof StandardHost host) {
                for (Valve valve : host.getPipeline().getValves()) {
                    if (valve instanceof ErrorReportValve) {
                        host.getPipeline().removeValve(valve);
                    }
                }
                host.setErrorReportValveClass(ProblemErrorReportValve.class.getName());
                host.getPipeline().addValve(new ProblemErrorReportValve());
            }
        });
    }
}
