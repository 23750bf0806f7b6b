package dev.herald.dispatcher.http;

import org.springframework.boot.http.converter.autoconfigure.ServerHttpMessageConvertersCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/** The API's JSON converter ({@link ContentLengthJsonConverter}), in place of Spring Boot's. */
@Configuration(proxyBeanMethods = false)
public class HttpConfiguration {

    /** Unordered, so it runs after Boot's own JSON customizer (order 0) and replaces its converter. */
    @Bean
    ServerHttpMessageConvertersCustomizer contentLengthJson(JsonMapper json) {
        return converters -> converters.withJsonConverter(new ContentLengthJsonConverter(json));
    }
}
