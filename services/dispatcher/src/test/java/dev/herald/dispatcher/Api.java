package dev.herald.dispatcher;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A plain HTTP client for the dispatcher under test: sends exactly the bytes and headers given. */
final class Api {
    static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final String base;

    Api(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    record Response(int status, Map<String, java.util.List<String>> headers, String body) {
        Optional<String> header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .findFirst().map(e -> e.getValue().getFirst());
        }

        JsonNode json() {
            return JSON.readTree(body);
        }

        String contentType() {
            return header("Content-Type").orElse("");
        }

        @Override
        public String toString() {
            return status + " " + headers + " " + body;
        }
    }

    Response call(String method, String path, String bearer, byte[] body, String contentType, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (bearer != null) {
            request.header("Authorization", "Bearer " + bearer);
        }
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        try {
            HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Response(response.statusCode(), response.headers().map(), response.body());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    Response json(String method, String path, String bearer, Object body, String... headers) {
        byte[] bytes = body == null ? null
                : body instanceof String text ? text.getBytes(StandardCharsets.UTF_8) : JSON.writeValueAsBytes(body);
        return call(method, path, bearer, bytes, body == null ? null : "application/json", headers);
    }

    Response get(String path, String bearer) {
        return call("GET", path, bearer, null, null);
    }
}
