package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/** Nothing a client sends yields a 5xx, and every error is a problem. */
class NastyInputTests extends DispatcherIntegrationTest {

    private record Endpoint(String method, String path, boolean admin) {
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static List<byte[]> bodies() {
        List<byte[]> bodies = new ArrayList<>();
        for (String text : List.of("", " ", "[]", "null", "{}", "\"text\"", "true", "123456789012345678901234567890",
                "1e999999", "-0", "{\"to\":1}", "{\"to\":null}", "{\"to\":[]}", "{\"to\":{\"tokens\":[null]},\"title\":\"x\"}",
                "{\"to\":{\"tokens\":[{\"channel\":null,\"token\":null}]},\"title\":\"x\"}",
                "{\"to\":{\"tokens\":[{\"channel\":\"fcm\",\"token\":\"t\"}]},\"title\":\"\\ud800\"}",
                "{\"to\":{\"topic\":\"a\"},\"overrides\":{\"fcm\":{\"k\":\"\\udfff\\ud800\"}}}",
                "{\"to\":{\"topic\":\"a\"},\"data\":{\"k\":{}}}", "{\"to\":{\"topic\":\"a\"},\"data\":{\"\":\"v\"}}",
                "{\"to\":{\"topic\":\"a\"},\"data\":{\"k\":null}}", "{\"to\":{\"topic\":\"a\"},\"data\":[1]}",
                "{\"to\":{\"topic\":\"a\"},\"overrides\":{\"fcm\":null}}", "{\"to\":{\"topic\":\"a\"},\"overrides\":{\"fcm\":[1]}}",
                "{\"to\":{\"topic\":\"a\"},\"overrides\":{\"web\":{}}}", "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"ttl\":1e308}",
                "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"ttl\":99999999999999999999}",
                "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"ttl\":-9223372036854775808}",
                "{\"to\":{\"topic\":\"a\"},\"title\":\"x\",\"ttl\":1.5}", "{\"to\":{\"topic\":\"a\"},\"title\":[\"x\"]}",
                "{\"to\":{\"topic\":\"\\u0000\"},\"title\":\"x\"}", "{\"to\":{\"devices\":[\"\\u00e9\\ud83d\\ude00\"]},\"title\":\"x\"}",
                "{\"to\":{\"topic\":\"a\"},\"title\":\"\\ud83d\\ude00 \\u202e\\u0000\"}", "{\"a\":1}{\"b\":2}", "{\"a\":",
                "{\"id\":\"\\u0000\",\"name\":\"\\ud83d\\ude00\"}", "{\"id\":\"ok\",\"name\":\"\"}", "{\"id\":7,\"name\":7}",
                "{\"serviceAccount\":\"x\"}", "{\"serviceAccount\":null}", "{\"serviceAccount\":{\"private_key\":123}}",
                "{\"serviceAccount\":{\"type\":\"service_account\",\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----\"}}",
                "{\"p8\":\"-----BEGIN PRIVATE KEY-----\\n!!!\\n-----END PRIVATE KEY-----\",\"keyId\":null}",
                "{\"p8\":[],\"keyId\":{},\"teamId\":1,\"topic\":true,\"environment\":\"moon\"}",
                "{\"channel\":\"fcm\",\"token\":\"t\",\"topics\":[null]}", "{\"channel\":\"fcm\",\"token\":\"t\",\"topics\":\"news\"}",
                "{\"channel\":\"fcm\",\"token\":\"\"}", "{\"channel\":\"FCM\",\"token\":\"t\"}",
                "\ufeff{\"to\":{\"topic\":\"a\"},\"title\":\"x\"}")) {
            bodies.add(utf8(text));
        }
        bodies.add(utf8("[".repeat(5000) + "]".repeat(5000)));
        bodies.add(utf8("{\"to\":{\"topic\":\"a\"},\"title\":\"" + "\\u00e9".repeat(20_000) + "\"}"));
        bodies.add(new byte[] {'{', '"', 't', 'i', 't', 'l', 'e', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'});
        bodies.add(new byte[] {(byte) 0xFF, (byte) 0xFE, 0, 0});
        bodies.add(new byte[1024 * 1024]);
        return bodies;
    }

    @Test
    void noInputYieldsA5xxAndEveryErrorIsAProblem() {
        TestApp app = createApp();
        String a = "/v1/apps/" + app.id();
        List<Endpoint> endpoints = List.of(
                new Endpoint("POST", "/v1/apps", true),
                new Endpoint("GET", a, true),
                new Endpoint("POST", a + "/keys", true),
                new Endpoint("DELETE", a + "/keys/0000abcd", true),
                new Endpoint("PUT", a + "/credentials/fcm", true),
                new Endpoint("PUT", a + "/credentials/apns", true),
                new Endpoint("DELETE", a + "/credentials/sms", true),
                new Endpoint("PUT", a + "/devices/d1", false),
                new Endpoint("GET", a + "/devices/d1", false),
                new Endpoint("DELETE", a + "/devices/nobody", false),
                new Endpoint("PUT", a + "/devices/d1/topics/news", false),
                new Endpoint("DELETE", a + "/devices/d1/topics/news", false),
                new Endpoint("POST", a + "/messages", false),
                new Endpoint("GET", a + "/messages/0190a0b0-0000-7000-8000-000000000000", false),
                new Endpoint("GET", a + "/stats", false));
        List<String> contentTypes = List.of("application/json", "application/json; charset=UTF-16", "text/plain");
        SoftAssertions softly = new SoftAssertions();
        int calls = 0;
        for (Endpoint endpoint : endpoints) {
            String token = endpoint.admin() ? ADMIN_TOKEN : app.key();
            for (byte[] body : bodies()) {
                for (String contentType : body.length < 100 ? contentTypes : List.of("application/json")) {
                    Api.Response response = api().call(endpoint.method(), endpoint.path(), token, body, contentType);
                    calls++;
                    check(softly, endpoint + " " + contentType + " " + preview(body), response);
                }
            }
        }
        softly.assertAll();
        assertThat(calls).isGreaterThan(1000);
    }

    @Test
    void nastyPathsAndHeadersYieldNo5xx() {
        TestApp app = createApp();
        String a = "/v1/apps/" + app.id();
        SoftAssertions softly = new SoftAssertions();
        for (String path : List.of(a + "/devices/%C3%A9", a + "/devices/" + "x".repeat(3000), a + "/devices/a%00b",
                a + "/devices/..", a + "/devices/%2e%2e", a + "/devices/d1/topics/%25", a + "/devices/d1/topics/%F0%9F%98%80",
                a + "/messages/%20", a + "/messages/" + "0".repeat(500), "/v1/apps/%C3%A9/stats", "/v1/apps/" + "a".repeat(200) + "/stats",
                "/v1/apps/" + app.id() + "/keys/ZZZZ", "/v1/apps/%00", "/v1/apps/a;b=c/stats", "/v1//apps", "/v1/apps/")) {
            for (String method : List.of("GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "HEAD")) {
                for (String token : new String[] {app.key(), ADMIN_TOKEN, null}) {
                    Api.Response response = api().call(method, path, token, utf8("{}"), "application/json");
                    check(softly, method + " " + path, response);
                }
            }
        }
        for (String authorization : List.of("Bearer", "Bearer ", "Bearer hk_", "Bearer hk_12345678_", "Bearer hk_1234567_x",
                "Bearer " + "hk_".repeat(3000), "Digest x", "Bearer \u00e9")) {
            Api.Response response = api().call("GET", a + "/stats", null, null, null, "Authorization", authorization);
            check(softly, authorization, response);
            softly.assertThat(response.status()).as(authorization).isEqualTo(401);
        }
        Api.Response accept = api().call("GET", a + "/stats", null, null, null, "Accept", "text/html");
        check(softly, "Accept: text/html", accept);
        softly.assertAll();
    }

    /** Found by the API fuzzing (scripts/api-fuzz): each was a 500 before. */
    @Test
    void malformedContentTypesAndQueryStringsAreProblemsNot500s() {
        TestApp app = createApp();
        String a = "/v1/apps/" + app.id();
        SoftAssertions softly = new SoftAssertions();
        List<Endpoint> endpoints = List.of(new Endpoint("GET", a, true), new Endpoint("POST", a + "/keys", true),
                new Endpoint("PUT", a + "/time-zone", true), new Endpoint("DELETE", a + "/credentials/fcm", true),
                new Endpoint("GET", a + "/stats", false), new Endpoint("DELETE", a + "/devices/d1", false),
                new Endpoint("PUT", a + "/devices/d1/topics/news", false), new Endpoint("POST", a + "/messages", false));
        for (Endpoint endpoint : endpoints) {
            for (String contentType : List.of("multipart/form-data", "multipart/form-data; boundary=",
                    "application/x-www-form-urlencoded", ";;;", "application/json; charset=nope")) {
                for (byte[] body : new byte[][] {null, utf8("a=b"), utf8("{\"timeZone\":\"UTC\"}")}) {
                    Api.Response response = api().call(endpoint.method(), endpoint.path(),
                            endpoint.admin() ? ADMIN_TOKEN : app.key(), body, contentType);
                    check(softly, endpoint + " Content-Type: " + contentType, response);
                }
            }
        }
        for (String query : List.of("=1", "%FF=1", "a=%C3%28", "limit=%FF", "cursor=%00", "&&&", "limit=1&limit=2")) {
            Api.Response response = api().call("GET", a + "/stale-devices?" + query, app.key(), null, null);
            check(softly, "query " + query, response);
        }
        softly.assertAll();
    }

    @Test
    void valuesOfTheWrongJsonTypeAreRefusedNotConverted() {
        assertThat(api().json("POST", "/v1/apps", ADMIN_TOKEN, "{\"id\":false,\"name\":\"x\"}").status())
                .isEqualTo(400);
        TestApp app = createApp();
        String send = "/v1/apps/" + app.id() + "/messages";
        for (String ttl : List.of("1.5", "\"60\"", "true")) {
            Api.Response response = api().json("POST", send, app.key(),
                    "{\"to\":{\"topic\":\"news\"},\"title\":\"x\",\"ttl\":" + ttl + "}");
            assertThat(response.status()).as("ttl " + ttl + " -> " + response).isEqualTo(400);
            assertThat(response.json().get("errors").get(0).get("field").asString()).isEqualTo("ttl");
        }
        // JSON Schema's integer: 60.0 is the integer 60.
        assertThat(api().json("POST", send, app.key(),
                "{\"to\":{\"topic\":\"news\"},\"title\":\"x\",\"ttl\":60.0}").status()).isEqualTo(202);
    }

    private static void check(SoftAssertions softly, String what, Api.Response response) {
        softly.assertThat(response.status()).as(what + " -> " + response).isLessThan(500);
        if (response.status() >= 400 && !"HEAD".equals(what.substring(0, Math.min(4, what.length())))) {
            softly.assertThat(response.contentType()).as(what + " -> " + response).startsWith("application/problem+json");
            softly.assertThat(response.body()).as(what + " -> " + response).contains("\"type\":\"urn:herald:problem:");
        }
    }

    private static String preview(byte[] body) {
        String text = new String(body, 0, Math.min(body.length, 60), StandardCharsets.UTF_8);
        return body.length > 60 ? text + "...(" + body.length + " bytes)" : text;
    }
}
