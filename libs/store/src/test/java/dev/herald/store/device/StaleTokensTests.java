package dev.herald.store.device;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Channel;
import dev.herald.contract.Target;
import dev.herald.store.TestRedis;
import dev.herald.store.StoreProperties;
import dev.herald.store.keys.RedisKeys;
import dev.herald.store.status.MessageStatusStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class StaleTokensTests {
    private static final String APP = "shop";
    private static final StoreProperties.Tokens LIFECYCLE = new StoreProperties.Tokens(Duration.ofDays(30), Duration.ofDays(270));
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    @RegisterExtension
    static final TestRedis redis = new TestRedis();

    /** The time the registry, the sweep and the statistics see: moved by the test, never slept on. */
    private Instant now = START;
    private final Clock clock = new Clock() {
        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Instant instant() {
            return now;
        }
    };
    private DeviceRegistry devices;
    private StaleTokens stale;

    @BeforeEach
    void connect() {
        devices = new DeviceRegistry(redis.async(), redis.functions(), clock, LIFECYCLE.staleAfter());
        stale = new StaleTokens(redis.async(), redis.functions(), clock, LIFECYCLE);
    }

    private void advance(Duration by) {
        now = now.plus(by);
    }

    @Test
    void aTokenNotRefreshedForAMonthIsStaleAndLeftOutOfAudiencesUntilItRegistersAgain() {
        join(devices.register(APP, "old", Channel.fcm, "tok-old", List.of("news")));
        advance(Duration.ofDays(20));
        join(devices.register(APP, "young", Channel.fcm, "tok-young", List.of("news")));
        advance(Duration.ofDays(11));

        DeviceRegistry.Resolved resolved = join(devices.resolve(APP, List.of("old", "young")));
        assertThat(resolved.targets()).containsExactly(new Target(Channel.fcm, "tok-young", "young"));
        assertThat(resolved.stale()).isEqualTo(1);
        assertThat(join(devices.find(APP, "old")).orElseThrow().stale()).isTrue();
        assertThat(join(devices.find(APP, "young")).orElseThrow().stale()).isFalse();
        assertThat(join(stale.count(APP))).isEqualTo(1);
        assertThat(join(new MessageStatusStore(redis.async(), redis.functions(), Duration.ofHours(1), clock).stats(APP))
                .staleTokensSkipped()).isEqualTo(1);

        join(devices.register(APP, "old", Channel.fcm, "tok-old", List.of("news"))); // the app refreshed it
        assertThat(join(devices.resolve(APP, List.of("old", "young"))).targets()).hasSize(2);
        assertThat(join(stale.count(APP))).isZero();
    }

    @Test
    void staleDevicesAreListedOldestFirstPageByPage() {
        IntStream.range(0, 7).forEach(i -> {
            join(devices.register(APP, "d" + i, Channel.apns, "tok-" + i, List.of()));
            if (i % 2 == 1) {
                advance(Duration.ofHours(1)); // pairs registered at the same millisecond: ordered by id
            }
        });
        advance(Duration.ofHours(1));
        join(devices.register(APP, "fresh", Channel.apns, "tok-fresh", List.of()));
        advance(Duration.ofDays(30)); // "fresh" registered exactly 30 days ago: not yet stale
        List<String> listed = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            StaleTokens.Page page = join(stale.page(APP, cursor, 3));
            page.devices().forEach(d -> listed.add(d.deviceId()));
            cursor = page.next();
            pages++;
        } while (cursor != null);

        assertThat(listed).containsExactly("d0", "d1", "d2", "d3", "d4", "d5", "d6");
        assertThat(pages).isEqualTo(3);
    }

    @Test
    void theSweepRemovesDevicesPastTheSecondAgeAndCountsThem() {
        join(devices.register(APP, "gone", Channel.fcm, "tok-gone", List.of("news")));
        advance(Duration.ofDays(100));
        join(devices.register(APP, "kept", Channel.fcm, "tok-kept", List.of("news")));
        advance(Duration.ofDays(171));

        assertThat(join(stale.apps())).contains(APP);
        assertThat(join(stale.removeExpired(APP, 100))).isEqualTo(1);
        assertThat(join(stale.removeExpired(APP, 100))).isZero();

        assertThat(join(devices.find(APP, "gone"))).isEmpty();
        assertThat(redis.sync().exists(RedisKeys.token(APP, "fcm", "tok-gone"))).isZero();
        assertThat(redis.sync().smembers(RedisKeys.topic(APP, "news"))).containsExactly("kept");
        assertThat(redis.sync().zscore(RedisKeys.deviceRefreshed(APP), "gone")).isNull();
        assertThat(join(new MessageStatusStore(redis.async(), redis.functions(), Duration.ofHours(1), clock).stats(APP))
                .staleTokensRemoved()).isEqualTo(1);
        assertThat(join(devices.find(APP, "kept")).orElseThrow().stale()).isTrue();
    }

    @Test
    void aDeviceRefreshedAfterTheSweepReadTheIndexIsKept() {
        join(devices.register(APP, "phone", Channel.fcm, "tok", List.of()));
        advance(Duration.ofDays(271));
        join(devices.register(APP, "phone", Channel.fcm, "tok", List.of())); // refreshed just now
        String[] keys = DeviceRegistry.deviceKeys(APP, "phone");
        long cutoff = now.minus(LIFECYCLE.removeAfter()).toEpochMilli();

        // What the sweep does for a device id it read before the refresh.
        assertThat(join(redis.functions().ask(dev.herald.store.redis.HeraldFunctions.Function.DEVICE_REMOVE_STALE,
                new String[] {keys[0], keys[1], keys[2], RedisKeys.appStats(APP)},
                RedisKeys.tokenPrefix(APP), RedisKeys.topicPrefix(APP), "phone", String.valueOf(cutoff)))).isFalse();
        assertThat(join(devices.find(APP, "phone"))).isPresent();
    }

    @Test
    void unregisteringADeviceTakesItOutOfTheIndex() {
        join(devices.register(APP, "d1", Channel.fcm, "tok", List.of()));
        join(devices.unregister(APP, "d1"));
        assertThat(redis.sync().zcard(RedisKeys.deviceRefreshed(APP))).isZero();
    }
}
