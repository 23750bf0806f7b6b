package dev.herald.sandbox;

import com.google.auth.oauth2.ServiceAccountCredentials;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.HttpProtocol;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Test client of a running sandbox: the control API over HTTP/1.1 (JDK client) and FCM sends over
 * h2c with prior knowledge (Reactor Netty, as the gateway speaks it).
 */
final class SandboxHttp {
    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging";

    private final URI base;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final reactor.netty.http.client.HttpClient h2c;

    SandboxHttp(ProviderSandbox sandbox) {
        this.base = sandbox.fcmEndpoint();
        this.h2c = reactor.netty.http.client.HttpClient.create().protocol(HttpProtocol.H2C).baseUrl(base.toString());
    }

    /** Header names in lower case; {@code version} is the HTTP version the answer came over. */
    record Response(int status, String body, String version, Map<String, String> headers) {
        JsonNode json() {
            return JSON.readTree(body);
        }

        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    Response get(String path) {
        return send(HttpRequest.newBuilder(base.resolve(path)).GET());
    }

    Response put(String path, String json) {
        return send(HttpRequest.newBuilder(base.resolve(path)).header("content-type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(json)));
    }

    Response post(String path, String contentType, String body) {
        return send(HttpRequest.newBuilder(base.resolve(path)).header("content-type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    /** A fresh access token, fetched the way the gateway does: google-auth-library with the demo account. */
    String accessToken() {
        try {
            String account = get("/sandbox/demo-credentials").json().path("fcm").path("serviceAccount").toString();
            ServiceAccountCredentials credentials = (ServiceAccountCredentials) ServiceAccountCredentials
                    .fromStream(new ByteArrayInputStream(account.getBytes(StandardCharsets.UTF_8)))
                    .createScoped(List.of(FCM_SCOPE));
            credentials.refresh();
            return credentials.getAccessToken().getTokenValue();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code POST messages:send} over h2c with prior knowledge; {@code accessToken} may be null. */
    Response fcmSend(String accessToken, String body) {
        return h2c.headers(headers -> {
                    headers.set("content-type", "application/json");
                    if (accessToken != null) {
                        headers.set("authorization", "Bearer " + accessToken);
                    }
                })
                .post().uri("/v1/projects/herald-sandbox/messages:send")
                .send(ByteBufFlux.fromString(Mono.just(body)))
                .responseSingle((response, content) -> content.asString().defaultIfEmpty("").map(text -> {
                    Map<String, String> headers = new HashMap<>();
                    response.responseHeaders().forEach(h -> headers.put(h.getKey().toLowerCase(Locale.ROOT), h.getValue()));
                    return new Response(response.status().code(), text, response.version().text(), headers);
                }))
                .block(Duration.ofSeconds(20));
    }

    /** The same send over plain HTTP/1.1. */
    Response fcmSendHttp11(String accessToken, String body) {
        return send(HttpRequest.newBuilder(base.resolve("/v1/projects/herald-sandbox/messages:send"))
                .header("content-type", "application/json")
                .header("authorization", "Bearer " + accessToken)
                .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    private Response send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = http.send(request.timeout(Duration.ofSeconds(20)).build(),
                    HttpResponse.BodyHandlers.ofString());
            Map<String, String> headers = new HashMap<>();
            response.headers().map().forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), values.getFirst()));
            return new Response(response.statusCode(), response.body(), response.version().name(), headers);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
