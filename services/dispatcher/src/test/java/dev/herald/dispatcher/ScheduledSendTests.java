package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.schedule.ScheduledSends;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import dev.herald.testsupport.SettableClock;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Scheduled sends against real RabbitMQ and Redis, with dispatchers whose clock the test moves: no
 * test waits for a due time, and "nothing before" is checked right after a scheduler looked.
 */
class ScheduledSendTests {

    @Test
    void aScheduledSendFiresOnceAtItsTimeAfterEveryServiceRestartedWithTwoDispatchersCompeting() throws Exception {
        LocalRedis redis = LocalRedis.start();
        LocalRabbit rabbit = LocalRabbit.start();
        try {
            SettableClock clock = new SettableClock(Instant.parse("2030-01-01T00:00:00Z"));
            Instant due = Instant.parse("2030-01-01T01:00:00Z");
            DispatcherIntegrationTest.TestApp app;
            String id;
            try (TestDispatcher only = TestDispatcher.start(clock, redis, rabbit)) {
                app = only.createApp();
                Api.Response accepted = only.api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                        "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "fcm-1"),
                                Map.of("channel", "apns", "token", "apns-1"))),
                        "title", "Water the ferns", "sendAt", due.toString()));
                assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
                assertThat(accepted.json().get("state").asString()).isEqualTo("scheduled");
                assertThat(accepted.json().get("dueAt").values()).extracting(JsonNode::asString).containsExactly(due.toString());
                id = accepted.json().get("id").asString();
                only.scheduler().tick();
                assertThat(only.messagesOf(Queues.SEND_NORMAL, List.of(id))).isEmpty();
            }
            // Every service restarts while the send waits: the dispatcher above, RabbitMQ, Redis.
            rabbit.stop();
            rabbit.restart();
            redis.restart();
            try (TestDispatcher one = TestDispatcher.start(clock, redis, rabbit);
                 TestDispatcher two = TestDispatcher.start(clock, redis, rabbit)) {
                JsonNode status = one.api().get("/v1/apps/" + app.id() + "/messages/" + id, app.key()).json();
                assertThat(status.get("state").asString()).isEqualTo("scheduled");
                assertThat(status.get("dueAt").values()).extracting(JsonNode::asString).containsExactly(due.toString());

                clock.set(due.minusMillis(1));
                tickTogether(one, two);
                assertThat(one.messagesOf(Queues.SEND_NORMAL, List.of(id))).isEmpty();

                clock.set(due);
                tickTogether(one, two); // both replicas (and their own pollers) compete for the one group
                RedisClusterAsyncCommands<String, String> commands = one.bean(RedisClusterAsyncCommands.class);
                awaitUntil(() -> commands.zcard(RedisKeys.schedule()).get() == 0, "the group left the schedule");
                List<JsonNode> batches = one.messagesOf(Queues.SEND_NORMAL, List.of(id));
                assertThat(batches).singleElement().satisfies(batch -> {
                    assertThat(batch.get("targets").values()).extracting(t -> t.get("token").asString())
                            .containsExactly("fcm-1", "apns-1");
                    assertThat(batch.at("/notification/title").asString()).isEqualTo("Water the ferns");
                });
                assertThat(fired(one, "instant") + fired(two, "instant")).isEqualTo(1.0);

                clock.set(due.plus(Duration.ofHours(2))); // well past any lease: nothing is left to fire again
                tickTogether(one, two);
                assertThat(one.messagesOf(Queues.SEND_NORMAL, List.of(id))).isEmpty();
                status = one.api().get("/v1/apps/" + app.id() + "/messages/" + id, app.key()).json();
                assertThat(status.get("state").asString()).isEqualTo("queued");
                assertThat(status.has("dueAt")).isFalse();
                assertThat(status.at("/targets/total").asInt()).isEqualTo(2);
            }
        } finally {
            rabbit.stop();
            redis.process().close();
        }
    }

    @Test
    void aSendAtLocalTimeReachesDevicesInThreeZonesAtTheirOwnSevenOClock() {
        SettableClock clock = new SettableClock(Instant.parse("2030-05-31T12:00:00Z"));
        LocalDateTime seven = LocalDateTime.parse("2030-06-01T07:00:00");
        try (TestDispatcher dispatcher = tickedByTheTest(clock)) {
            Api api = dispatcher.api();
            DispatcherIntegrationTest.TestApp app = dispatcher.createApp();
            Api.Response zone = api.json("PUT", "/v1/apps/" + app.id() + "/time-zone", DispatcherIntegrationTest.ADMIN_TOKEN,
                    Map.of("timeZone", "Europe/Paris"));
            assertThat(zone.status()).as(zone.toString()).isEqualTo(200);
            register(api, app, "tokyo", "Asia/Tokyo");
            register(api, app, "paris", "Europe/Paris");
            register(api, app, "new-york", "America/New_York");
            register(api, app, "no-zone", null); // the app's default: Paris
            assertThat(api.get("/v1/apps/" + app.id() + "/devices/tokyo", app.key()).json().get("timeZone").asString())
                    .isEqualTo("Asia/Tokyo");

            Map<Instant, Set<String>> expected = new LinkedHashMap<>();
            expected.put(Instant.parse("2030-05-31T22:00:00Z"), Set.of("tokyo"));              // 07:00 JST (+9)
            expected.put(Instant.parse("2030-06-01T05:00:00Z"), Set.of("paris", "no-zone"));   // 07:00 CEST (+2)
            expected.put(Instant.parse("2030-06-01T11:00:00Z"), Set.of("new-york"));           // 07:00 EDT (-4)

            Api.Response list = api.json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                    "to", Map.of("devices", List.of("tokyo", "paris", "new-york", "no-zone")), "title", "Good morning",
                    "sendAtLocalTime", seven.toString()));
            assertThat(list.status()).as(list.toString()).isEqualTo(202);
            assertThat(list.json().get("dueAt").values()).extracting(node -> Instant.parse(node.asString()))
                    .containsExactlyElementsOf(expected.keySet());
            Api.Response topic = api.json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                    "to", Map.of("topic", "garden"), "title", "Good morning", "sendAtLocalTime", seven.toString()));
            assertThat(topic.status()).as(topic.toString()).isEqualTo(202);
            assertThat(topic.json().get("dueAt").values()).extracting(node -> Instant.parse(node.asString()))
                    .containsAll(expected.keySet());
            List<String> ids = List.of(list.json().get("id").asString(), topic.json().get("id").asString());
            JsonNode scheduled = api.get("/v1/apps/" + app.id() + "/messages/" + ids.getFirst(), app.key()).json();
            assertThat(scheduled.get("state").asString()).isEqualTo("scheduled");
            assertThat(scheduled.get("dueAt").size()).isEqualTo(3);

            for (Map.Entry<Instant, Set<String>> group : expected.entrySet()) {
                clock.set(group.getKey().minusSeconds(1));
                dispatcher.scheduler().tick();
                assertThat(reached(dispatcher, ids)).as("before " + group.getKey()).isEmpty();

                clock.set(group.getKey());
                dispatcher.scheduler().tick();
                Map<String, List<String>> reached = reached(dispatcher, ids);
                assertThat(reached.keySet()).as("at " + group.getKey()).containsExactlyInAnyOrderElementsOf(ids);
                reached.values().forEach(devices -> assertThat(devices).containsExactlyInAnyOrderElementsOf(group.getValue()));
            }
            JsonNode done = api.get("/v1/apps/" + app.id() + "/messages/" + ids.getFirst(), app.key()).json();
            assertThat(done.get("state").asString()).isEqualTo("queued");
            assertThat(done.at("/targets/total").asInt()).isEqualTo(4);
            assertThat(done.at("/targets/expanded").asBoolean()).isTrue();
            assertThat(done.has("dueAt")).isFalse();
            JsonNode topicStatus = api.get("/v1/apps/" + app.id() + "/messages/" + ids.getLast(), app.key()).json();
            assertThat(topicStatus.at("/targets/total").asInt()).isEqualTo(4);
            assertThat(topicStatus.at("/targets/expanded").asBoolean()).as("zones further west are still due").isFalse();
        }
    }

    @Test
    void aGroupClaimedByAReplicaThatDiedBeforePublishingFiresWhenItsLeaseEnds() {
        SettableClock clock = new SettableClock(Instant.parse("2030-02-01T00:00:00Z"));
        Instant due = Instant.parse("2030-02-01T00:01:00Z");
        Duration lease = Duration.ofHours(2);
        try (TestDispatcher dispatcher = TestDispatcher.start(clock, LocalRedis.get(), LocalRabbit.get(),
                "--herald.dispatcher.schedule.poll-interval=1h", "--herald.dispatcher.schedule.lease=" + lease.toHours() + "h")) {
            DispatcherIntegrationTest.TestApp app = dispatcher.createApp();
            Api.Response accepted = dispatcher.api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                    "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "fcm-lease"))), "title", "Once",
                    "sendAt", due.toString()));
            assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
            String id = accepted.json().get("id").asString();

            clock.set(due);
            // Another replica claims the group, then dies without publishing it.
            List<ScheduledSends.Due> lost = dispatcher.bean(ScheduledSends.class).claim(due, lease, 100).join();
            assertThat(lost).extracting(ScheduledSends.Due::messageId).contains(id);
            dispatcher.scheduler().tick();
            assertThat(dispatcher.messagesOf(Queues.SEND_NORMAL, List.of(id))).as("while the lease holds").isEmpty();

            clock.set(due.plus(lease));
            dispatcher.scheduler().tick();
            assertThat(dispatcher.messagesOf(Queues.SEND_NORMAL, List.of(id))).singleElement()
                    .satisfies(batch -> assertThat(batch.at("/targets/0/token").asString()).isEqualTo("fcm-lease"));
            dispatcher.scheduler().tick();
            assertThat(dispatcher.messagesOf(Queues.SEND_NORMAL, List.of(id))).isEmpty();
        }
    }

    @Test
    void aCancelledScheduledSendIsNeverQueuedAndACancelAfterTheFirstZoneGroupStopsTheRest() {
        // Days no other test's groups in the shared schedule fall due on (the others' are later, or fired).
        SettableClock clock = new SettableClock(Instant.parse("2030-04-14T12:00:00Z"));
        LocalDateTime seven = LocalDateTime.parse("2030-04-15T07:00:00");
        Instant tokyo = Instant.parse("2030-04-14T22:00:00Z");
        Instant paris = Instant.parse("2030-04-15T05:00:00Z");
        try (TestDispatcher dispatcher = tickedByTheTest(clock)) {
            Api api = dispatcher.api();
            DispatcherIntegrationTest.TestApp app = dispatcher.createApp();
            register(api, app, "tokyo", "Asia/Tokyo");
            register(api, app, "paris", "Europe/Paris");

            // Cancelled while only scheduled: it ends at once, and its due time queues nothing.
            Api.Response later = api.json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                    "to", Map.of("tokens", List.of(Map.of("channel", "fcm", "token", "fcm-cancelled"))), "title", "Never",
                    "sendAt", tokyo.toString()));
            assertThat(later.status()).as(later.toString()).isEqualTo(202);
            String laterId = later.json().get("id").asString();
            Api.Response cancelled = api.call("DELETE", "/v1/apps/" + app.id() + "/messages/" + laterId, app.key(), null, null);
            assertThat(cancelled.status()).as(cancelled.toString()).isEqualTo(200);
            assertThat(cancelled.json().get("state").asString()).isEqualTo("cancelled");
            assertThat(cancelled.json().has("dueAt")).as("it will not fire").isFalse();

            // A send at each device's 07:00, cancelled once Tokyo's group is queued: Paris's never is.
            Api.Response local = api.json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                    "to", Map.of("devices", List.of("tokyo", "paris")), "title", "Good morning",
                    "sendAtLocalTime", seven.toString()));
            assertThat(local.status()).as(local.toString()).isEqualTo(202);
            String localId = local.json().get("id").asString();
            List<String> ids = List.of(laterId, localId);
            clock.set(tokyo);
            dispatcher.scheduler().tick();
            assertThat(reached(dispatcher, ids)).isEqualTo(Map.of(localId, List.of("tokyo")));

            Api.Response cancelling = api.call("DELETE", "/v1/apps/" + app.id() + "/messages/" + localId, app.key(), null, null);
            assertThat(cancelling.status()).as(cancelling.toString()).isEqualTo(202);
            assertThat(cancelling.json().get("state").asString()).as("Tokyo's batch is the gateway's to end").isEqualTo("cancelling");
            clock.set(paris);
            dispatcher.scheduler().tick();
            assertThat(reached(dispatcher, ids)).isEmpty();
            JsonNode status = api.get("/v1/apps/" + app.id() + "/messages/" + localId, app.key()).json();
            assertThat(status.at("/targets/total").asInt()).as("Paris's group added nothing").isEqualTo(1);
            assertThat(status.at("/targets/expanded").asBoolean()).as("its last group is done with").isTrue();
            assertThat(dispatcher.bean(MeterRegistry.class).get("herald.dispatcher.schedule.skipped").tag("reason", "cancelled")
                    .counter().count()).isEqualTo(2.0);
        }
    }

    @Test
    void aSpreadLocalTimeSendGoesAtTheRateOfItsWholeAudienceInEveryZoneGroup() {
        // A year of its own: the groups it leaves in the shared schedule never fall due in another test.
        SettableClock clock = new SettableClock(Instant.parse("2031-05-31T12:00:00Z"));
        Instant tokyo = Instant.parse("2031-05-31T22:00:00Z");
        try (TestDispatcher dispatcher = tickedByTheTest(clock)) {
            Api api = dispatcher.api();
            DispatcherIntegrationTest.TestApp app = dispatcher.createApp();
            register(api, app, "tokyo", "Asia/Tokyo");
            register(api, app, "paris", "Europe/Paris");
            register(api, app, "new-york", "America/New_York");
            Api.Response accepted = api.json("POST", "/v1/apps/" + app.id() + "/messages", app.key(), Map.of(
                    "to", Map.of("topic", "garden"), "title", "Good morning", "sendAtLocalTime", "2031-06-01T07:00:00",
                    "throttle", Map.of("spreadMinutes", 1)));
            assertThat(accepted.status()).as(accepted.toString()).isEqualTo(202);
            String id = accepted.json().get("id").asString();

            clock.set(tokyo);
            dispatcher.scheduler().tick();
            // Tokyo's group is one device, the audience three: three a minute, not one.
            assertThat(dispatcher.messagesOf(Queues.SEND_NORMAL, List.of(id))).singleElement()
                    .satisfies(batch -> assertThat(batch.get("throttlePerMinute").asLong()).isEqualTo(3));
        }
    }

    /** The poller looks once at start; then only the test's ticks look, right after it moved the clock. */
    private static TestDispatcher tickedByTheTest(SettableClock clock) {
        return TestDispatcher.start(clock, LocalRedis.get(), LocalRabbit.get(),
                "--herald.dispatcher.schedule.poll-interval=1h", "--herald.dispatcher.schedule.lease=2h");
    }

    private static void register(Api api, DispatcherIntegrationTest.TestApp app, String deviceId, String timeZone) {
        Map<String, Object> device = new LinkedHashMap<>(Map.of("channel", "fcm", "token", "token-" + deviceId,
                "topics", List.of("garden")));
        if (timeZone != null) {
            device.put("timeZone", timeZone);
        }
        Api.Response response = api.json("PUT", "/v1/apps/" + app.id() + "/devices/" + deviceId, app.key(), device);
        assertThat(response.status()).as(response.toString()).isEqualTo(200);
    }

    /** Message id -> the devices its batches now on the send queue address. */
    private static Map<String, List<String>> reached(TestDispatcher dispatcher, List<String> ids) {
        return dispatcher.messagesOf(Queues.SEND_NORMAL, ids).stream().collect(Collectors.groupingBy(
                batch -> batch.get("messageId").asString(),
                Collectors.flatMapping(batch -> batch.get("targets").values().stream().map(t -> t.get("deviceId").asString()),
                        Collectors.toList())));
    }

    private static void tickTogether(TestDispatcher one, TestDispatcher two) {
        CompletableFuture.allOf(CompletableFuture.runAsync(one.scheduler()::tick),
                CompletableFuture.runAsync(two.scheduler()::tick)).join();
    }

    private static double fired(TestDispatcher dispatcher, String mode) {
        return dispatcher.bean(MeterRegistry.class).get("herald.dispatcher.schedule.fired").tag("mode", mode).counter().count();
    }

    private interface Check {
        boolean done() throws Exception;
    }

    private static void awaitUntil(Check check, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!check.done()) {
            assertThat(System.nanoTime()).as("waiting for: " + what).isLessThan(deadline);
            Thread.sleep(20); // polling Redis, not waiting for a time
        }
    }
}
