package dev.herald.sandbox.oauth;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.util.MultiValueMap;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * {@code POST /token}: exchanges a service-account JWT assertion for an access token, answering
 * in the shape of {@code https://oauth2.googleapis.com/token} (including its error JSON).
 */
@Configuration(proxyBeanMethods = false)
class TokenEndpoint {
    static final String JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";

    @Bean
    RouterFunction<ServerResponse> tokenRoute(AccessTokens tokens, AssertionVerifier verifier) {
        return RouterFunctions.route().POST("/token", request -> token(request, tokens, verifier)).build();
    }

    private static Mono<ServerResponse> token(ServerRequest request, AccessTokens tokens, AssertionVerifier verifier) {
        return request.formData().flatMap(form -> {
            String grantType = form.getFirst("grant_type");
            if (!JWT_BEARER.equals(grantType)) {
                return error("unsupported_grant_type", "Invalid grant_type: " + (grantType == null ? "" : grantType));
            }
            String assertion = first(form, "assertion");
            if (assertion == null) {
                return error("invalid_request", "Missing required parameter: assertion");
            }
            String problem = verifier.problem(assertion);
            if (problem != null) {
                return error("invalid_grant", problem);
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("access_token", tokens.issue());
            body.put("expires_in", tokens.ttl().toSeconds());
            body.put("token_type", "Bearer");
            return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(body);
        });
    }

    private static String first(MultiValueMap<String, String> form, String name) {
        String value = form.getFirst(name);
        return value == null || value.isBlank() ? null : value;
    }

    private static Mono<ServerResponse> error(String error, String description) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("error_description", description);
        return ServerResponse.badRequest().contentType(MediaType.APPLICATION_JSON).bodyValue(body);
    }
}
