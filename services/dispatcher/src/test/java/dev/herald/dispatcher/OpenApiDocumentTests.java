package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.dispatcher.auth.AppApi;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

/** The checked-in OpenAPI document cannot drift from the controllers. */
class OpenApiDocumentTests extends DispatcherIntegrationTest {

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    private static JsonNode document() throws Exception {
        try (InputStream in = OpenApiDocumentTests.class.getResourceAsStream("/static/openapi.yaml")) {
            return YAMLMapper.builder().build().readTree(in);
        }
    }

    @Test
    void everyControllerMappingIsInTheDocument() throws Exception {
        JsonNode paths = document().get("paths");
        List<String> api = new ArrayList<>();
        mappings.getHandlerMethods().forEach((RequestMappingInfo info, HandlerMethod handler) -> {
            if (!handler.getBeanType().getPackageName().startsWith("dev.herald.dispatcher")) {
                return;
            }
            for (String pattern : info.getPatternValues()) {
                if (!pattern.startsWith("/v1")) {
                    continue; // the error controller
                }
                assertThat(handler.getBeanType().isAnnotationPresent(AdminApi.class)
                        || handler.getBeanType().isAnnotationPresent(AppApi.class))
                        .as(handler + " is marked @AdminApi or @AppApi").isTrue();
                for (RequestMethod method : info.getMethodsCondition().getMethods()) {
                    String operation = method.name().toLowerCase(Locale.ROOT);
                    api.add(operation + " " + pattern);
                    assertThat(paths.has(pattern)).as("path " + pattern + " documented").isTrue();
                    assertThat(paths.get(pattern).has(operation)).as(operation + " " + pattern + " documented").isTrue();
                }
            }
        });
        assertThat(api).hasSizeGreaterThanOrEqualTo(15);
    }

    @Test
    void everyDocumentedOperationExists() throws Exception {
        List<String> served = new ArrayList<>();
        mappings.getHandlerMethods().forEach((info, handler) -> info.getPatternValues().forEach(pattern ->
                info.getMethodsCondition().getMethods().forEach(m -> served.add(m.name().toLowerCase(Locale.ROOT) + " " + pattern))));
        document().get("paths").properties().forEach(path -> path.getValue().properties().forEach(operation -> {
            if (!operation.getKey().equals("parameters")) {
                assertThat(served).contains(operation.getKey() + " " + path.getKey());
            }
        }));
    }

    /** OPTIONS on every documented path lists exactly its documented methods in Allow (HEAD and OPTIONS aside). */
    @Test
    void allowListsTheDocumentedMethods() throws Exception {
        TestApp app = createApp();
        document().get("paths").properties().forEach(path -> {
            String concrete = path.getKey().replace("{appId}", app.id()).replace("{deviceId}", "d1")
                    .replace("{topic}", "news").replace("{keyId}", "0000abcd")
                    .replace("{messageId}", "0190a0b0-0000-7000-8000-000000000000");
            java.util.Set<String> documented = new java.util.TreeSet<>();
            path.getValue().properties().forEach(operation -> {
                if (!operation.getKey().equals("parameters")) {
                    documented.add(operation.getKey().toUpperCase(Locale.ROOT));
                }
            });
            Api.Response response = api().call("OPTIONS", concrete, ADMIN_TOKEN, null, null);
            java.util.Set<String> allowed = new java.util.TreeSet<>(List.of(response.header("Allow").orElse("").split("\\s*,\\s*")));
            allowed.removeAll(List.of("HEAD", "OPTIONS"));
            assertThat(allowed).as("Allow of " + path.getKey()).isEqualTo(documented);
        });
    }

    @Test
    void theDocumentIsServedWithoutAuthentication() {
        Api.Response response = api().get("/openapi.yaml", null);
        assertThat(response.status()).isEqualTo(200);
        assertThat(response.body()).startsWith("openapi: 3.1.0");
    }
}
