package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

class DeviceImportTests extends DispatcherIntegrationTest {

    private Api.Response importDevices(TestApp app, String body) {
        return api().call("POST", "/v1/apps/" + app.id() + "/device-imports", app.key(),
                body.getBytes(StandardCharsets.UTF_8), "application/x-ndjson");
    }

    @Test
    void eachGoodLineIsRegisteredAndEachBadOneReportedByItsNumber() {
        TestApp app = createApp();
        String body = String.join("\n",
                "{\"deviceId\":\"phone-1\",\"channel\":\"fcm\",\"token\":\"tok-1\",\"topics\":[\"news\",\"news\"],\"timeZone\":\"Europe/Paris\"}",
                "{\"deviceId\":\"car-1\",\"channel\":\"mqtt\"}\r",
                "",
                "{\"deviceId\":\"phone-2\",\"channel\":\"fcm\"}",
                "{\"deviceId\":\"phone-3\",\"channel\":\"pigeon\",\"token\":\"t\"}",
                "{\"deviceId\":\"bad/id\",\"channel\":\"fcm\",\"token\":\"t\"}",
                "{\"deviceId\":\"phone-4\",",
                "{\"deviceId\":\"phone-5\",\"channel\":\"apns\",\"token\":\"" + "x".repeat(40_000) + "\"}",
                "{\"deviceId\":\"phone-6\",\"channel\":\"apns\",\"token\":\"tok-6\",\"timeZone\":\"Mars/Olympus\"}",
                "{\"deviceId\":\"phone-7\",\"channel\":\"apns\",\"token\":\"tok-7\"}");

        Api.Response response = importDevices(app, body);

        assertThat(response.status()).as(response.toString()).isEqualTo(200);
        JsonNode report = response.json();
        assertThat(report.get("lines").asLong()).isEqualTo(9);
        assertThat(report.get("imported").asLong()).isEqualTo(3);
        assertThat(report.get("created").asLong()).isEqualTo(3);
        assertThat(report.get("updated").asLong()).isZero();
        assertThat(report.get("failed").asLong()).isEqualTo(6);
        assertThat(report.get("errorsOmitted").asLong()).isZero();
        assertThat(report.get("errors").values()).extracting(e -> e.get("line").asLong())
                .containsExactly(4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(report.get("errors").values()).allSatisfy(e -> {
            assertThat(e.get("status").asInt()).isEqualTo(400);
            assertThat(e.get("type").asString()).startsWith("urn:herald:problem:");
            assertThat(e.get("detail").asString()).isNotBlank();
        });
        assertThat(report.get("errors").get(0).get("errors").get(0).get("field").asString()).isEqualTo("token");
        assertThat(report.get("errors").get(1).get("errors").get(0).get("field").asString()).isEqualTo("channel");
        assertThat(report.get("errors").get(2).get("errors").get(0).get("field").asString()).isEqualTo("deviceId");
        assertThat(report.get("errors").get(3).get("type").asString()).endsWith(":malformed-json");
        assertThat(report.get("errors").get(4).get("type").asString()).endsWith(":line-too-long");
        assertThat(report.get("errors").get(5).get("errors").get(0).get("field").asString()).isEqualTo("timeZone");
        // Nothing a line held is quoted back (it may be a credential).
        assertThat(response.body()).doesNotContain("xxxxxxxx").doesNotContain("pigeon").doesNotContain("Mars/Olympus");

        JsonNode phone = api().get("/v1/apps/" + app.id() + "/devices/phone-1", app.key()).json();
        assertThat(phone.get("token").asString()).isEqualTo("tok-1");
        assertThat(phone.get("topics").values()).extracting(JsonNode::asString).containsExactly("news");
        assertThat(phone.get("timeZone").asString()).isEqualTo("Europe/Paris");
        assertThat(api().get("/v1/apps/" + app.id() + "/devices/car-1", app.key()).json().get("mqtt")).isNotNull();
        assertProblem(api().get("/v1/apps/" + app.id() + "/devices/phone-4", app.key()), 404);
    }

    @Test
    void anImportLargerThanTheRequestLimitStreamsInBatchesAndARerunChangesNothing() {
        TestApp app = createApp();
        // ~1 MB: four times the request size limit, and several batches.
        String body = IntStream.range(0, 12_000)
                .mapToObj(i -> "{\"deviceId\":\"device-" + i + "\",\"channel\":\"fcm\",\"token\":\"token-" + i
                        + "-abcdefghijklmnopqrstuvwxyz\",\"topics\":[\"all\"]}")
                .collect(Collectors.joining("\n", "", "\n"));
        assertThat(body.length()).isGreaterThan(4 * 256 * 1024);

        JsonNode first = importDevices(app, body).json();
        assertThat(first.get("imported").asLong()).isEqualTo(12_000);
        assertThat(first.get("created").asLong()).isEqualTo(12_000);
        assertThat(first.get("failed").asLong()).isZero();

        JsonNode again = importDevices(app, body).json();
        assertThat(again.get("imported").asLong()).isEqualTo(12_000);
        assertThat(again.get("created").asLong()).isZero();
        assertThat(again.get("updated").asLong()).isEqualTo(12_000);

        JsonNode last = api().get("/v1/apps/" + app.id() + "/devices/device-11999", app.key()).json();
        assertThat(last.get("token").asString()).isEqualTo("token-11999-abcdefghijklmnopqrstuvwxyz");
        assertThat(last.get("topics").values()).extracting(JsonNode::asString).containsExactly("all");
    }

    @Test
    void onlyNdjsonIsTaken() {
        TestApp app = createApp();
        Api.Response response = api().call("POST", "/v1/apps/" + app.id() + "/device-imports", app.key(),
                "[]".getBytes(StandardCharsets.UTF_8), "application/json");
        assertProblem(response, 415);
    }

    @Test
    void aStrangerCannotImport() {
        TestApp app = createApp();
        TestApp other = createApp();
        Api.Response response = api().call("POST", "/v1/apps/" + app.id() + "/device-imports", other.key(),
                "{}".getBytes(StandardCharsets.UTF_8), "application/x-ndjson");
        assertThat(response.status()).isIn(401, 403, 404);
    }
}
