package dev.herald.store.keys;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import dev.herald.store.keys.RedisKeys.KeyPattern;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The key table in libs/store/README.md and {@link RedisKeys} list the same keys. */
class RedisKeysReadmeTests {
    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\|", Pattern.MULTILINE);

    private static Set<String> documented() throws IOException {
        String readme = Files.readString(Path.of("README.md"));
        String keys = readme.substring(readme.indexOf("## Keys"), readme.indexOf("## ", readme.indexOf("## Keys") + 3));
        Matcher rows = ROW.matcher(keys);
        return rows.results().map(row -> row.group(1)).collect(Collectors.toSet());
    }

    @Test
    void everyKeyPatternIsInTheReadmeTableAndEveryRowIsAKeyPattern() throws IOException {
        Set<String> defined = Arrays.stream(RedisKeys.KeyPattern.values()).map(RedisKeys.KeyPattern::shape)
                .collect(Collectors.toSet());
        assertThat(documented()).containsExactlyInAnyOrderElementsOf(defined);
    }

    @Test
    void everyBuiltKeyHasTheShapeOfItsPattern() {
        Map<KeyPattern, String> built = new EnumMap<>(KeyPattern.class);
        built.put(KeyPattern.APP, RedisKeys.app("shop"));
        built.put(KeyPattern.APP_STATS, RedisKeys.appStats("shop"));
        built.put(KeyPattern.APP_STATS_MINUTE, RedisKeys.appStatsMinute("shop", 29_000_000));
        built.put(KeyPattern.APP_STATS_HOUR, RedisKeys.appStatsHour("shop", 490_000));
        built.put(KeyPattern.APP_MESSAGES, RedisKeys.appMessages("shop"));
        built.put(KeyPattern.API_KEY, RedisKeys.apiKey("0a1b2c3d"));
        built.put(KeyPattern.IDEMPOTENCY, RedisKeys.idempotency("shop", "order 42"));
        built.put(KeyPattern.DEVICE, RedisKeys.device("shop", "d:1"));
        built.put(KeyPattern.DEVICE_TOPICS, RedisKeys.deviceTopics("shop", "d:1"));
        built.put(KeyPattern.TOPIC, RedisKeys.topic("shop", "news"));
        built.put(KeyPattern.TOKEN, RedisKeys.token("shop", "fcm", "t:1"));
        built.put(KeyPattern.MESSAGE, RedisKeys.message("m1"));
        built.put(KeyPattern.MESSAGE_DONE, RedisKeys.messageDone("m1"));
        built.put(KeyPattern.EXPANSION, RedisKeys.expansion("m1"));
        built.put(KeyPattern.MQTT_BOX, RedisKeys.mqttBox("shop", "d:1"));
        built.put(KeyPattern.MQTT_BOX_ENTRIES, RedisKeys.mqttBoxEntries("shop", "d:1"));
        built.put(KeyPattern.MQTT_SESSION, RedisKeys.mqttSession("shop", "d:1"));
        built.put(KeyPattern.MQTT_CREDENTIALS, RedisKeys.mqttCredentials("shop", "car:7"));
        built.put(KeyPattern.MQTT_CONNECTED, RedisKeys.mqttConnected("shop", "car:7"));
        built.put(KeyPattern.MQTT_EXPIRIES, RedisKeys.mqttExpiries());
        built.put(KeyPattern.DEVICE_REFRESHED, RedisKeys.deviceRefreshed("shop"));
        built.put(KeyPattern.DEVICE_APPS, RedisKeys.deviceApps());
        built.put(KeyPattern.TOKEN_SWEEP_LEASE, RedisKeys.tokenSweepLease());
        built.put(KeyPattern.PROVIDER_QUOTA, RedisKeys.providerQuota("shop", "fcm"));
        built.put(KeyPattern.PROVIDER_PAUSE, RedisKeys.providerPause("shop", "fcm"));
        built.put(KeyPattern.MESSAGE_THROTTLE, RedisKeys.messageThrottle("m1"));
        built.put(KeyPattern.API_RATE, RedisKeys.apiRate("shop"));
        built.put(KeyPattern.SCHEDULE, RedisKeys.schedule());
        built.put(KeyPattern.SCHEDULED_SEND, RedisKeys.scheduledSend("m1"));
        built.put(KeyPattern.REPLICA_LEASE, RedisKeys.replicaLease("gateway", "gateway-7d9f-x2b4.a1b2c3d4"));
        built.put(KeyPattern.AUDIT, RedisKeys.audit());
        assertThat(built).containsOnlyKeys(KeyPattern.values());
        built.forEach((pattern, key) -> assertThat(KeyPattern.of(key)).as(key).contains(pattern));
    }

    @Test
    void aKeyOfAShapeTheStoreDoesNotDefineMatchesNoPattern() {
        assertThat(RedisKeys.KeyPattern.of("session:shop:d1")).isEmpty();
        assertThat(RedisKeys.KeyPattern.of("msg:m1")).as("a message key without its hash tag").isEmpty();
    }

    @Test
    void theKeysOfOneMessageOneDeviceBoxAndOneAppRegistryShareAHashTag() {
        assertThat(tag(RedisKeys.message("m1"))).isEqualTo(tag(RedisKeys.messageDone("m1"))).isEqualTo(tag(RedisKeys.expansion("m1")))
                .isEqualTo(tag(RedisKeys.scheduledSend("m1")));
        assertThat(tag(RedisKeys.mqttBox("a", "d"))).isEqualTo(tag(RedisKeys.mqttBoxEntries("a", "d")))
                .isEqualTo(tag(RedisKeys.mqttSession("a", "d")));
        assertThat(tag(RedisKeys.device("a", "d"))).isEqualTo(tag(RedisKeys.deviceTopics("a", "d")))
                .isEqualTo(tag(RedisKeys.topic("a", "t"))).isEqualTo(tag(RedisKeys.token("a", "fcm", "x")))
                .isEqualTo(tag(RedisKeys.topicPrefix("a") + "t2")).isEqualTo(tag(RedisKeys.tokenPrefix("a") + "apns:y"));
    }

    /** What Redis Cluster hashes: the first non-empty {...}. */
    private static String tag(String key) {
        int open = key.indexOf('{');
        int close = key.indexOf('}', open + 1);
        assertThat(open).as(key).isNotNegative();
        assertThat(close).as(key).isGreaterThan(open + 1);
        return key.substring(open + 1, close);
    }
}
