package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class ProblemResponsesTests extends DispatcherIntegrationTest {

    private Api.Response send(TestApp app, String body) {
        return api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), body);
    }

    private static String firstField(Api.Response response) {
        return response.json().at("/errors/0/field").asString();
    }

    private static String firstMessage(Api.Response response) {
        return response.json().at("/errors/0/message").asString();
    }

    @Test
    void malformedJsonSaysWhere() {
        TestApp app = createApp();
        Api.Response response = send(app, "{\"to\": {\"topic\": \"a\"},\n \"title\": oops}");
        assertProblem(response, 400);
        JsonNode problem = response.json();
        assertThat(problem.get("type").asString()).isEqualTo("urn:herald:problem:malformed-json");
        assertThat(problem.get("detail").asString()).contains("line 2").doesNotContain("oops");
        assertThat(problem.get("instance").asString()).isEqualTo("/v1/apps/" + app.id() + "/messages");
    }

    @Test
    void aWrongTypeNamesTheFieldAndTheExpectedType() {
        TestApp app = createApp();
        Api.Response ttl = send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"ttl\":\"soon\"}");
        assertProblem(ttl, 400);
        assertThat(firstField(ttl)).isEqualTo("ttl");
        assertThat(firstMessage(ttl)).isEqualTo("must be an integer");

        Api.Response tokens = send(app, "{\"to\":{\"tokens\":{\"channel\":\"fcm\"}},\"title\":\"x\"}");
        assertProblem(tokens, 400);
        assertThat(firstField(tokens)).isEqualTo("to.tokens");
        assertThat(firstMessage(tokens)).isEqualTo("must be an array");

        Api.Response body = send(app, "[]");
        assertProblem(body, 400);
        assertThat(body.json().get("detail").asString()).contains("must be an object");
    }

    @Test
    void anUnknownEnumValueListsTheAllowedValues() {
        TestApp app = createApp();
        Api.Response priority = send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"priority\":\"urgent\"}");
        assertProblem(priority, 400);
        assertThat(firstField(priority)).isEqualTo("priority");
        assertThat(firstMessage(priority)).isEqualTo("must be one of [high, normal]");

        Api.Response channel = send(app, "{\"to\":{\"tokens\":[{\"channel\":\"sms\",\"token\":\"t\"}]},\"title\":\"x\"}");
        assertProblem(channel, 400);
        assertThat(firstField(channel)).isEqualTo("to.tokens[0].channel");
        assertThat(firstMessage(channel)).isEqualTo("must be one of [fcm, apns, mqtt, webpush]");
    }

    @Test
    void missingAndInvalidFieldsAreAllListed() {
        TestApp app = createApp();
        Api.Response response = send(app, "{\"to\":{\"tokens\":[{\"channel\":\"fcm\"},{\"token\":\"has space\",\"channel\":\"apns\"}]},"
                + "\"title\":\"x\",\"ttl\":-1}");
        assertProblem(response, 400);
        assertThat(response.json().get("errors").values()).extracting(e -> e.get("field").asString())
                .containsExactly("to.tokens[0].token", "to.tokens[1].token", "ttl");

        Api.Response noTo = send(app, "{\"title\":\"x\"}");
        assertProblem(noTo, 400);
        assertThat(firstField(noTo)).isEqualTo("to");
        assertThat(firstMessage(noTo)).isEqualTo("is required");
    }

    @Test
    void anUnknownFieldIsRefused() {
        TestApp app = createApp();
        Api.Response response = send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"priorty\":\"high\"}");
        assertProblem(response, 400);
        assertThat(firstField(response)).isEqualTo("priorty");
        assertThat(firstMessage(response)).startsWith("unknown field");
    }

    @Test
    void exactlyOneAudienceIsRequired() {
        TestApp app = createApp();
        for (String to : List.of("{}", "{\"topic\":\"a\",\"devices\":[\"d\"]}", "{\"tokens\":[]}", "{\"devices\":[]}")) {
            Api.Response response = send(app, "{\"to\":" + to + ",\"title\":\"x\"}");
            assertProblem(response, 400);
            assertThat(firstField(response)).startsWith("to");
        }
    }

    @Test
    void idsAndTopicsAreValidated() {
        TestApp app = createApp();
        Api.Response topic = send(app, "{\"to\":{\"topic\":\"no spaces\"},\"title\":\"x\"}");
        assertProblem(topic, 400);
        assertThat(firstField(topic)).isEqualTo("to.topic");
        Api.Response devices = send(app, "{\"to\":{\"devices\":[\"ok\",\"not/ok\"]},\"title\":\"x\"}");
        assertProblem(devices, 400);
        assertThat(firstField(devices)).isEqualTo("to.devices[1]");
        Api.Response token = send(app, "{\"to\":{\"tokens\":[{\"channel\":\"fcm\",\"token\":\"" + "t".repeat(4097) + "\"}]},\"title\":\"x\"}");
        assertProblem(token, 400);
        Api.Response create = api().json("POST", "/v1/apps", ADMIN_TOKEN, Map.of("id", "bad id", "name", "n"));
        assertProblem(create, 400);
        assertThat(firstField(create)).isEqualTo("id");
        // ':' would let app "a" with device "b:c" and app "a:b" with device "c" share a Redis key.
        Api.Response colon = api().json("POST", "/v1/apps", ADMIN_TOKEN, Map.of("id", app.id() + ":x", "name", "n"));
        assertProblem(colon, 400);
        assertThat(firstField(colon)).isEqualTo("id");
        assertThat(api().json("PUT", "/v1/apps/" + app.id() + "/devices/aa:bb:cc:dd:ee:ff", app.key(),
                Map.of("channel", "fcm", "token", "t")).status()).as("a device id with ':' (a MAC address)").isLessThan(300);
        assertProblem(api().json("PUT", "/v1/apps/" + app.id() + "/devices/" + "d".repeat(129), app.key(),
                Map.of("channel", "fcm", "token", "t")), 400);
        assertProblem(api().call("PUT", "/v1/apps/" + app.id() + "/devices/d1/topics/" + "t".repeat(101), app.key(), null, null), 400);
    }

    @Test
    void tooManyTargetsIs400AndTooLongATtlIs400() {
        TestApp app = createApp();
        List<String> devices = new ArrayList<>();
        for (int i = 0; i < 1001; i++) {
            devices.add("d" + i);
        }
        Api.Response many = api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(),
                Map.of("to", Map.of("devices", devices), "title", "x"));
        assertProblem(many, 400);
        assertThat(firstMessage(many)).contains("at most 1000");
        Api.Response ttl = send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"ttl\":2419201}");
        assertProblem(ttl, 400);
        assertThat(firstField(ttl)).isEqualTo("ttl");
    }

    @Test
    void aPayloadOver4096BytesIs413() {
        TestApp app = createApp();
        Api.Response response = send(app, "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"data\":{\"k\":\"" + "é".repeat(2100) + "\"}}");
        assertProblem(response, 413);
        assertThat(response.json().get("detail").asString()).contains("4096");
        Api.Response fits = send(app, "{\"to\":{\"topic\":\"a\"},\"data\":{\"k\":\"" + "x".repeat(3900) + "\"}}");
        assertThat(fits.status()).as(fits.toString()).isEqualTo(202);
        // Within 4096 as the client wrote it, but no room left for what the platform adds.
        Api.Response noRoom = send(app, "{\"to\":{\"topic\":\"a\"},\"data\":{\"k\":\"" + "x".repeat(4000) + "\"}}");
        assertProblem(noRoom, 413);
    }

    @Test
    void aBodyOverTheRequestLimitIs413BeforeParsing() {
        TestApp app = createApp();
        byte[] body = ("{\"to\":{\"topic\":\"a\"},\"title\":\"" + "x".repeat(300_000) + "\"}").getBytes(StandardCharsets.UTF_8);
        Api.Response response = api().call("POST", "/v1/apps/" + app.id() + "/messages", app.key(), body, "application/json");
        assertProblem(response, 413);
    }

    @Test
    void theWrongMethodIs405AndTheWrongMediaTypeIs415() {
        TestApp app = createApp();
        Api.Response method = api().call("PATCH", "/v1/apps/" + app.id() + "/messages", app.key(), new byte[0], "application/json");
        assertProblem(method, 405);
        assertThat(method.header("Allow")).isPresent();
        Api.Response media = api().call("POST", "/v1/apps/" + app.id() + "/messages", app.key(),
                "to=topic".getBytes(StandardCharsets.UTF_8), "text/plain");
        assertProblem(media, 415);
        Api.Response none = api().call("POST", "/v1/apps/" + app.id() + "/messages", app.key(),
                "{}".getBytes(StandardCharsets.UTF_8), null);
        assertProblem(none, 415);
    }

    @Test
    void anUnknownRouteIs404Problem() {
        assertProblem(api().get("/v1/nothing-here", ADMIN_TOKEN), 404);
        assertProblem(api().get("/nothing-here", null), 404);
    }

    @Test
    void anEmptyBodyIs400() {
        TestApp app = createApp();
        Api.Response response = api().call("POST", "/v1/apps/" + app.id() + "/messages", app.key(), new byte[0], "application/json");
        assertProblem(response, 400);
        assertThat(response.json().get("detail").asString()).contains("missing");
    }
}
