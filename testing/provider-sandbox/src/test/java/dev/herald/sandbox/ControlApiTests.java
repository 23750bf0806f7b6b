package dev.herald.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.Base64;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** The /sandbox control API, the OAuth token endpoint's refusals, and the actuator endpoints. */
class ControlApiTests {
    private static ProviderSandbox sandbox;
    private static SandboxHttp http;

    @BeforeAll
    static void start() {
        sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=5");
        http = new SandboxHttp(sandbox);
    }

    @AfterAll
    static void stop() {
        sandbox.close();
    }

    @BeforeEach
    void clean() {
        sandbox.faults().restore();
    }

    @Test
    void faultsStartFromConfigurationAndPartialUpdatesKeepOtherFields() {
        assertThat(http.get("/sandbox/faults").json().path("latencyMs").asLong()).isEqualTo(5);

        SandboxHttp.Response response = http.put("/sandbox/faults", "{\"unavailableRate\":0.25}");

        assertThat(response.status()).isEqualTo(200);
        assertThat(response.json().path("unavailableRate").asDouble()).isEqualTo(0.25);
        assertThat(response.json().path("latencyMs").asLong()).isEqualTo(5);
        assertThat(response.json().path("retryAfterSeconds").asLong()).isEqualTo(1);
    }

    @Test
    void rateOutsideZeroToOneIsRefusedAsProblemJson() {
        SandboxHttp.Response response = http.put("/sandbox/faults", "{\"unregisteredRate\":1.5}");

        assertThat(response.status()).isEqualTo(400);
        assertThat(response.header("content-type")).startsWith("application/problem+json");
        assertThat(response.json().path("detail").asString()).contains("unregisteredRate");
        assertThat(http.get("/sandbox/faults").json().path("unregisteredRate").asDouble()).isZero();
    }

    @Test
    void ratesAddingUpToMoreThanOneUnknownFieldsAndNonNumbersAreRefused() {
        assertThat(http.put("/sandbox/faults", "{\"unregisteredRate\":0.6,\"unavailableRate\":0.6}").status()).isEqualTo(400);
        assertThat(http.put("/sandbox/faults", "{\"latency\":10}").json().path("detail").asString()).contains("latency");
        assertThat(http.put("/sandbox/faults", "{\"latencyMs\":\"soon\"}").status()).isEqualTo(400);
        assertThat(http.put("/sandbox/faults", "{\"latencyMs\":-1}").status()).isEqualTo(400);
    }

    @Test
    void demoCredentialsHaveTheShapesTheDispatcherStores() {
        JsonNode credentials = http.get("/sandbox/demo-credentials").json();

        JsonNode account = credentials.path("fcm").path("serviceAccount");
        assertThat(account.path("type").asString()).isEqualTo("service_account");
        assertThat(account.path("project_id").asString()).isEqualTo("herald-sandbox");
        assertThat(account.path("private_key").asString()).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(account.path("private_key_id").asString()).hasSize(40);
        assertThat(account.path("client_email").asString()).endsWith(".iam.gserviceaccount.com");
        assertThat(account.path("token_uri").asString()).isEqualTo("http://127.0.0.1:" + sandbox.fcmPort() + "/token");
        JsonNode apns = credentials.path("apns");
        assertThat(apns.path("p8").asString()).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(apns.path("keyId").asString()).isEqualTo("SANDBOXKEY");
        assertThat(apns.path("teamId").asString()).isEqualTo("SANDBOXTM1");
        assertThat(apns.path("topic").asString()).isEqualTo("dev.herald.demo");
        assertThat(apns.path("environment").asString()).isEqualTo("sandbox");
    }

    @Test
    void apnsCertificateIsServedAndWrittenToTheConfiguredFile() throws Exception {
        SandboxHttp.Response response = http.get("/sandbox/apns-certificate.pem");

        assertThat(response.status()).isEqualTo(200);
        // One request per HTTP/1.1 connection: see server.netty.max-keep-alive-requests in provider-sandbox.yaml.
        assertThat(response.header("connection")).isEqualTo("close");
        assertThat(response.body()).startsWith("-----BEGIN CERTIFICATE-----");
        assertThat(Files.readString(sandbox.apnsCertificate())).isEqualTo(response.body());
    }

    @Test
    void receivedForAnUnknownTokenIsAllZero() {
        JsonNode received = http.get("/sandbox/received?token=never-seen").json();

        assertThat(received.path("token").asString()).isEqualTo("never-seen");
        assertThat(received.path("fcm").asLong()).isZero();
        assertThat(received.path("apns").asLong()).isZero();
        assertThat(received.path("attempts").asLong()).isZero();
    }

    @Test
    void tokenEndpointRefusesMalformedAssertionsAsInvalidGrant() {
        SandboxHttp.Response response = http.post("/token", "application/x-www-form-urlencoded",
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=not.a.jwt");

        assertThat(response.status()).isEqualTo(400);
        assertThat(response.json().path("error").asString()).isEqualTo("invalid_grant");
        assertThat(response.json().path("error_description").asString()).isNotBlank();
    }

    @Test
    void tokenEndpointRefusesAnAssertionClaimingTheDemoKeyWithABadSignature() {
        String kid = http.get("/sandbox/demo-credentials").json().path("fcm").path("serviceAccount")
                .path("private_key_id").asString();
        long now = System.currentTimeMillis() / 1000;
        Base64.Encoder encoder = Base64.getUrlEncoder().withoutPadding();
        String assertion = encoder.encodeToString(("{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":\"" + kid + "\"}").getBytes())
                + "." + encoder.encodeToString(("{\"iss\":\"a@b\",\"aud\":\"x\",\"scope\":\"s\",\"iat\":" + now
                        + ",\"exp\":" + (now + 3600) + "}").getBytes())
                + "." + encoder.encodeToString(new byte[256]);

        SandboxHttp.Response response = http.post("/token", "application/x-www-form-urlencoded",
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion);

        assertThat(response.status()).isEqualTo(400);
        assertThat(response.json().path("error_description").asString()).isEqualTo("Invalid JWT Signature.");
    }

    @Test
    void tokenEndpointRefusesOtherGrantTypes() {
        SandboxHttp.Response response = http.post("/token", "application/x-www-form-urlencoded",
                "grant_type=client_credentials");

        assertThat(response.status()).isEqualTo(400);
        assertThat(response.json().path("error").asString()).isEqualTo("unsupported_grant_type");
    }

    @Test
    void prometheusExposesRequestCountsByProviderAndOutcome() {
        http.fcmSend(null, "{\"message\":{\"token\":\"t\"}}");

        SandboxHttp.Response metrics = http.get("/actuator/prometheus");

        assertThat(metrics.status()).isEqualTo(200);
        assertThat(metrics.body()).contains("herald_sandbox_requests_total{outcome=\"UNAUTHENTICATED\",provider=\"fcm\"");
        assertThat(metrics.body()).contains("herald_sandbox_request_latency_seconds_count{provider=\"fcm\"");
        assertThat(http.get("/actuator/health").json().path("status").asString()).isEqualTo("UP");
    }
}
