package dev.herald.store.device;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Channel;
import dev.herald.contract.Target;
import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class DeviceRegistryTests {
    private static final String APP = "shop";

    @RegisterExtension
    static final TestRedis redis = new TestRedis();
    private static DeviceRegistry devices;

    @BeforeAll
    static void connect() {
        devices = new DeviceRegistry(redis.async(), redis.functions(), TestRedis.CLOCK, java.time.Duration.ofDays(30));
    }

    @Test
    void registerIsTrueForANewDeviceAndFalseForAnUpdate() {
        assertThat(join(devices.register(APP, "d1", Channel.fcm, "tok-a", List.of("news")))).isTrue();
        assertThat(join(devices.register(APP, "d1", Channel.fcm, "tok-a", List.of("news")))).isFalse();

        Device device = join(devices.find(APP, "d1")).orElseThrow();
        assertThat(device.channel()).isEqualTo(Channel.fcm);
        assertThat(device.token()).isEqualTo("tok-a");
        assertThat(device.topics()).containsExactly("news");
        assertThat(device.updatedAt()).isNotNull();
    }

    @Test
    void devicesOfAnotherAppAreSeparate() {
        join(devices.register(APP, "d1", Channel.fcm, "tok-a", List.of("news")));

        assertThat(join(devices.register("other", "d1", Channel.apns, "tok-b", List.of()))).isTrue();
        assertThat(join(devices.find(APP, "d1"))).map(Device::token).contains("tok-a");
        assertThat(topicMembers("other", "news")).isEmpty();
    }

    @Test
    void reRegisteringWithANewTokenDropsTheOldTokenIndexAndMovesTopics() {
        join(devices.register(APP, "d1", Channel.fcm, "tok-old", List.of("news", "sport")));

        assertThat(join(devices.register(APP, "d1", Channel.apns, "tok-new", List.of("sport", "weather")))).isFalse();

        assertThat(redis.sync().exists(RedisKeys.token(APP, "fcm", "tok-old"))).isZero();
        assertThat(redis.sync().get(RedisKeys.token(APP, "apns", "tok-new"))).isEqualTo("d1");
        assertThat(topicMembers(APP, "news")).isEmpty();
        assertThat(topicMembers(APP, "sport")).containsExactly("d1");
        assertThat(topicMembers(APP, "weather")).containsExactly("d1");
        Device device = join(devices.find(APP, "d1")).orElseThrow();
        assertThat(device.target()).isEqualTo(new Target(Channel.apns, "tok-new", "d1"));
        assertThat(device.topics()).containsExactlyInAnyOrder("sport", "weather");
    }

    @Test
    void unregisterRemovesTheDeviceFromItsTopicsAndTheTokenIndex() {
        join(devices.register(APP, "d1", Channel.fcm, "tok-a", List.of("news", "sport")));
        join(devices.register(APP, "d2", Channel.fcm, "tok-b", List.of("news")));

        assertThat(join(devices.unregister(APP, "d1"))).isTrue();

        assertThat(join(devices.find(APP, "d1"))).isEmpty();
        assertThat(topicMembers(APP, "news")).containsExactly("d2");
        assertThat(topicMembers(APP, "sport")).isEmpty();
        assertThat(redis.sync().exists(RedisKeys.token(APP, "fcm", "tok-a"), RedisKeys.deviceTopics(APP, "d1"))).isZero();
        assertThat(join(devices.unregister(APP, "d1"))).isFalse();
    }

    @Test
    void subscribeAndUnsubscribeChangeBothSidesOfMembership() {
        join(devices.register(APP, "d1", Channel.fcm, "tok-a", List.of()));

        assertThat(join(devices.subscribe(APP, "d1", "news"))).isTrue();
        assertThat(topicMembers(APP, "news")).containsExactly("d1");
        assertThat(join(devices.find(APP, "d1")).orElseThrow().topics()).containsExactly("news");

        assertThat(join(devices.unsubscribe(APP, "d1", "news"))).isTrue();
        assertThat(topicMembers(APP, "news")).isEmpty();
        assertThat(join(devices.find(APP, "d1")).orElseThrow().topics()).isEmpty();
    }

    @Test
    void subscribeOrUnsubscribeOfAnUnknownDeviceIsFalseAndWritesNothing() {
        assertThat(join(devices.subscribe(APP, "ghost", "news"))).isFalse();
        assertThat(join(devices.unsubscribe(APP, "ghost", "news"))).isFalse();

        assertThat(redis.sync().dbsize()).isZero();
    }

    @Test
    void removeTokenRemovesTheDeviceHoldingIt() {
        join(devices.register(APP, "d1", Channel.fcm, "tok-a", List.of("news")));

        assertThat(join(devices.removeToken(APP, Channel.fcm, "tok-a"))).isTrue();

        assertThat(join(devices.find(APP, "d1"))).isEmpty();
        assertThat(topicMembers(APP, "news")).isEmpty();
        assertThat(redis.sync().keys("*")).as("nothing left but the token sweep's list of apps").containsExactly(RedisKeys.deviceApps());
    }

    @Test
    void removeTokenLeavesADeviceThatNoLongerHoldsThatToken() {
        join(devices.register(APP, "d1", Channel.fcm, "tok-old", List.of("news")));
        join(devices.register(APP, "d1", Channel.fcm, "tok-new", List.of("news")));

        assertThat(join(devices.removeToken(APP, Channel.fcm, "tok-old"))).isFalse();
        assertThat(join(devices.removeToken(APP, Channel.apns, "tok-new"))).isFalse();
        assertThat(join(devices.removeToken("other", Channel.fcm, "tok-new"))).isFalse();

        assertThat(join(devices.find(APP, "d1"))).map(Device::token).contains("tok-new");
        assertThat(topicMembers(APP, "news")).containsExactly("d1");
    }

    @Test
    void topicPagesTogetherCoverEveryMemberAndEndWithCursorZero() {
        List<String> ids = IntStream.range(0, 2_500).mapToObj(i -> "dev-" + i).toList();
        join(CompletableFuture.allOf(ids.stream()
                .map(id -> devices.register(APP, id, Channel.fcm, "tok-" + id, List.of("news")))
                .toArray(CompletableFuture[]::new)));
        join(devices.register(APP, "not-subscribed", Channel.fcm, "tok-x", List.of("sport")));

        Set<String> seen = new HashSet<>();
        List<TopicPage> pages = new ArrayList<>();
        String cursor = "0";
        do {
            TopicPage page = join(devices.topicPage(APP, "news", cursor, 500));
            pages.add(page);
            seen.addAll(page.deviceIds());
            cursor = page.cursor();
            assertThat(pages).as("pages before the scan ended").hasSizeLessThan(1_000);
        } while (!"0".equals(cursor));

        assertThat(seen).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(pages).hasSizeGreaterThan(1);
        assertThat(pages.getLast().last()).isTrue();
        assertThat(pages.subList(0, pages.size() - 1)).noneMatch(TopicPage::last);
    }

    @Test
    void topicPageOfAnEmptyTopicIsLast() {
        TopicPage page = join(devices.topicPage(APP, "nobody-listens", "0", 500));

        assertThat(page.deviceIds()).isEmpty();
        assertThat(page.last()).isTrue();
    }

    @Test
    void resolveReturnsTargetsInOrderAndSkipsUnknownDevices() {
        join(devices.register(APP, "d1", Channel.fcm, "tok-a", List.of()));
        join(devices.register(APP, "d2", Channel.apns, "tok-b", List.of()));
        join(devices.register("other", "d3", Channel.mqtt, "d3", List.of()));

        List<Target> targets = join(devices.resolve(APP, List.of("d2", "ghost", "d1", "d3"))).targets();

        assertThat(targets).containsExactly(
                new Target(Channel.apns, "tok-b", "d2"),
                new Target(Channel.fcm, "tok-a", "d1"));
        assertThat(join(devices.resolve(APP, List.of())).targets()).isEmpty();
    }

    @Test
    void registerAllReplacesEachDeviceAsARegistrationWouldAndCountsTheNewOnes() {
        join(devices.register(APP, "d1", Channel.fcm, "tok-old", List.of("news", "sport")));
        join(devices.setTimeZone(APP, "d1", java.util.Optional.of("Europe/Paris")));
        List<Registration> batch = List.of(
                new Registration("d1", Channel.apns, "tok-new", List.of("weather"), java.util.Optional.empty()),
                new Registration("d2", Channel.fcm, "tok-2", List.of(), java.util.Optional.of("Asia/Tokyo")),
                new Registration("d3", Channel.mqtt, "d3", List.of("news", "weather"), java.util.Optional.empty()));

        assertThat(join(devices.registerAll(APP, batch))).isEqualTo(2);
        // The same batch again changes nothing and creates nothing.
        assertThat(join(devices.registerAll(APP, batch))).isZero();

        Device d1 = join(devices.find(APP, "d1")).orElseThrow();
        assertThat(d1.target()).isEqualTo(new Target(Channel.apns, "tok-new", "d1"));
        assertThat(d1.topics()).containsExactly("weather");
        assertThat(d1.timeZone()).isEmpty();
        assertThat(redis.sync().exists(RedisKeys.token(APP, "fcm", "tok-old"))).isZero();
        assertThat(join(devices.find(APP, "d2")).orElseThrow().timeZone()).contains("Asia/Tokyo");
        assertThat(redis.sync().get(RedisKeys.token(APP, "fcm", "tok-2"))).isEqualTo("d2");
        assertThat(topicMembers(APP, "news")).containsExactly("d3");
        assertThat(topicMembers(APP, "sport")).isEmpty();
        assertThat(topicMembers(APP, "weather")).containsExactlyInAnyOrder("d1", "d3");
        assertThat(redis.sync().zcard(RedisKeys.deviceRefreshed(APP))).isEqualTo(3);
        assertThat(redis.sync().sismember(RedisKeys.deviceApps(), APP)).isTrue();
    }

    @Test
    void aDeviceTwiceInOneBatchEndsAsItsLastLineSays() {
        // The batch's topic additions wait for the end of the call; the second line of d1 must still
        // take d1 out of the topic its first line put it in.
        List<Registration> batch = List.of(
                new Registration("d1", Channel.fcm, "tok-1", List.of("news", "sport"), java.util.Optional.empty()),
                new Registration("d2", Channel.fcm, "tok-2", List.of("news"), java.util.Optional.empty()),
                new Registration("d1", Channel.fcm, "tok-1b", List.of("sport", "weather"), java.util.Optional.empty()));

        assertThat(join(devices.registerAll(APP, batch))).isEqualTo(2);

        assertThat(topicMembers(APP, "news")).containsExactly("d2");
        assertThat(topicMembers(APP, "sport")).containsExactly("d1");
        assertThat(topicMembers(APP, "weather")).containsExactly("d1");
        assertThat(join(devices.find(APP, "d1")).orElseThrow().topics()).containsExactlyInAnyOrder("sport", "weather");
        assertThat(redis.sync().exists(RedisKeys.token(APP, "fcm", "tok-1"))).isZero();
        assertThat(redis.sync().get(RedisKeys.token(APP, "fcm", "tok-1b"))).isEqualTo("d1");
        assertThat(redis.sync().zcard(RedisKeys.deviceRefreshed(APP))).isEqualTo(2);
    }

    private static Set<String> topicMembers(String app, String topic) {
        return redis.sync().smembers(RedisKeys.topic(app, topic));
    }
}
