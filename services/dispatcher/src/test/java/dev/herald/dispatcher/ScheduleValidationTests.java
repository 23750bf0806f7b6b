package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/** Times and zones a scheduled send or a registration may not give: 400 problem+json, nothing stored. */
class ScheduleValidationTests extends DispatcherIntegrationTest {

    private Api.Response send(TestApp app, Map<String, Object> when) {
        Map<String, Object> body = new LinkedHashMap<>(Map.of("to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "t1"))),
                "title", "x"));
        body.putAll(when);
        return api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), body);
    }

    private static void assertInvalid(Api.Response response, String field, String says) {
        assertProblem(response, 400);
        assertThat(response.body()).contains(field).contains(says);
    }

    @Test
    void aPastSendAtIsRefused() {
        assertInvalid(send(createApp(), Map.of("sendAt", Instant.now().minus(Duration.ofMinutes(5)).toString())),
                "sendAt", "in the past");
    }

    @Test
    void aSendAtBeyondTheHorizonIsRefused() {
        assertInvalid(send(createApp(), Map.of("sendAt", Instant.now().plus(Duration.ofDays(31)).toString())),
                "sendAt", "more than 30 days ahead");
    }

    @Test
    void bothTimesAtOnceAreRefused() {
        Instant later = Instant.now().plus(Duration.ofHours(1));
        assertInvalid(send(createApp(), Map.of("sendAt", later.toString(),
                "sendAtLocalTime", LocalDateTime.ofInstant(later, ZoneOffset.UTC).toString())), "sendAt", "not both");
    }

    @Test
    void aLocalTimeThatHasPassedInTheAppsZoneIsRefused() {
        LocalDateTime earlier = LocalDateTime.ofInstant(Instant.now().minus(Duration.ofHours(1)), ZoneOffset.UTC);
        assertInvalid(send(createApp(), Map.of("sendAtLocalTime", earlier.toString())), "sendAtLocalTime", "in the past in UTC");
    }

    @Test
    void aTimeThatIsNoTimeIsMalformed() {
        assertProblem(send(createApp(), Map.of("sendAt", "tomorrow at seven")), 400);
    }

    @Test
    void aSendAtWithAnOffsetIsThatInstant() {
        Instant due = Instant.now().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS);
        Api.Response response = send(createApp(), Map.of("sendAt",
                // the formatter always writes the seconds; OffsetDateTime.toString drops ":00", which RFC 3339 does not allow
                java.time.format.DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(due.atOffset(ZoneOffset.ofHours(2)))));
        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        assertThat(Instant.parse(response.json().get("dueAt").get(0).asString())).isEqualTo(due);
    }

    @Test
    void anInstantWithoutItsSecondsIsRefusedWithWhatItShouldLookLike() {
        String nextYear = String.valueOf(LocalDateTime.now(ZoneOffset.UTC).getYear() + 1);
        assertInvalid(send(createApp(), Map.of("sendAt", nextYear + "-01-05T12:30+02:00")), "sendAt", "seconds included");
    }

    @Test
    void anEmptyTimeOrOneNotAStringIsMalformedNotAbsentOrAnEpoch() {
        TestApp app = createApp();
        long inAnHour = Instant.now().plus(Duration.ofHours(1)).getEpochSecond();
        LocalDateTime local = LocalDateTime.now(ZoneOffset.UTC).plusHours(1);
        for (String field : List.of("sendAt", "sendAtLocalTime")) {
            for (Object malformed : List.of("", " ", inAnHour, String.valueOf(inAnHour), String.valueOf(inAnHour * 1000), List.of(local.getYear(), local.getMonthValue(),
                    local.getDayOfMonth(), local.getHour(), local.getMinute()))) {
                assertInvalid(send(app, Map.of(field, malformed)), field, "");
                assertInvalid(api().json("POST", "/v1/apps/" + app.id() + "/previews", app.key(),
                        Map.of("to", Map.of("topic", "news"), "title", "x", field, malformed)), field, "");
            }
        }
    }

    @Test
    void aScheduledSendWithinTheToleranceIsAcceptedAndDueAtOnce() {
        TestApp app = createApp();
        Api.Response response = send(app, Map.of("sendAt", Instant.now().minusSeconds(2).toString()));
        assertThat(response.status()).as(response.toString()).isEqualTo(202);
        assertThat(response.json().get("state").asString()).isEqualTo("scheduled");
    }

    @Test
    void unknownTimeZonesAreRefused() {
        TestApp app = createApp();
        Api.Response device = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d1", app.key(),
                Map.of("channel", "fcm", "token", "t1", "timeZone", "Mars/Olympus_Mons"));
        assertInvalid(device, "timeZone", "IANA time zone");
        Api.Response offset = api().json("PUT", "/v1/apps/" + app.id() + "/devices/d1", app.key(),
                Map.of("channel", "fcm", "token", "t1", "timeZone", "+02:00"));
        assertInvalid(offset, "timeZone", "IANA time zone");
        Api.Response appZone = api().json("PUT", "/v1/apps/" + app.id() + "/time-zone", ADMIN_TOKEN, Map.of("timeZone", "Europe/Atlantis"));
        assertInvalid(appZone, "timeZone", "IANA time zone");
        assertThat(api().get("/v1/apps/" + app.id() + "/devices/d1", app.key()).status()).isEqualTo(404);
    }

    @Test
    void anAppsDefaultZoneIsUtcUntilSet() {
        TestApp app = createApp();
        String path = "/v1/apps/" + app.id() + "/time-zone";
        assertThat(api().get(path, ADMIN_TOKEN).json().get("timeZone").asString()).isEqualTo("UTC");
        assertThat(api().json("PUT", path, ADMIN_TOKEN, Map.of("timeZone", "Asia/Kolkata")).status()).isEqualTo(200);
        JsonNode zone = api().get(path, ADMIN_TOKEN).json();
        assertThat(zone.get("timeZone").asString()).isEqualTo("Asia/Kolkata");
        assertThat(api().get(path, app.key()).status()).isEqualTo(401);
        assertProblem(api().get("/v1/apps/no-such-app/time-zone", ADMIN_TOKEN), 404);
    }
}
