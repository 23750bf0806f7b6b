package dev.herald.store.keys;

import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * Every Redis key Herald uses, built here and nowhere else (libs/store/README.md documents each).
 *
 * <p>Keys that a function or transaction uses together share a hash tag, the part in braces, so they
 * sit in one hash slot and the same code runs on Redis Cluster: {@code {<app>}} for an app and its
 * device registry, {@code {<message>}} for a message's status, {@code {<app>/<device>}} for an MQTT
 * device's box and session. App ids never contain {@code :}, {@code /} or braces (the dispatcher
 * checks them), device ids never {@code /}, so no two entities share a name.
 */
public final class RedisKeys {
    /** The pub/sub channel on which a changed app's id is published (not a key). */
    public static final String APP_CHANGES_CHANNEL = "herald:app-changed";

    /** Every key shape, with what the README table says of it and a pattern a live key must match. */
    public enum KeyPattern {
        APP("app:{<app>}", "app:\\{[^}]+\\}"),
        APP_STATS("stats:{<app>}", "stats:\\{[^}]+\\}"),
        APP_STATS_MINUTE("statsm:{<app>}:<minute>", "statsm:\\{[^}]+\\}:[0-9]+"),
        APP_STATS_HOUR("statsh:{<app>}:<hour>", "statsh:\\{[^}]+\\}:[0-9]+"),
        APP_MESSAGES("msgs:{<app>}", "msgs:\\{[^}]+\\}"),
        API_KEY("apikey:<keyId>", "apikey:[^{}]+"),
        IDEMPOTENCY("idem:<app>:<key>", "idem:[^:{}]+:.+"),
        DEVICE("dev:{<app>}:<device>", "dev:\\{[^}]+\\}:.+"),
        DEVICE_TOPICS("devtopics:{<app>}:<device>", "devtopics:\\{[^}]+\\}:.+"),
        TOPIC("topic:{<app>}:<topic>", "topic:\\{[^}]+\\}:.+"),
        TOKEN("tok:{<app>}:<channel>:<token>", "tok:\\{[^}]+\\}:[a-z]+:.+"),
        MESSAGE("msg:{<message>}", "msg:\\{[^}]+\\}"),
        MESSAGE_DONE("done:{<message>}", "done:\\{[^}]+\\}"),
        EXPANSION("expand:{<message>}", "expand:\\{[^}]+\\}"),
        MQTT_BOX("cm:box:{<app>/<device>}", "cm:box:\\{[^}/]+/[^}]+\\}"),
        MQTT_BOX_ENTRIES("cm:boxm:{<app>/<device>}", "cm:boxm:\\{[^}/]+/[^}]+\\}"),
        MQTT_SESSION("cm:session:{<app>/<device>}", "cm:session:\\{[^}/]+/[^}]+\\}"),
        MQTT_CREDENTIALS("cm:cred:{<app>/<device>}", "cm:cred:\\{[^}/]+/[^}]+\\}"),
        MQTT_CONNECTED("cm:connected:{<app>/<device>}", "cm:connected:\\{[^}/]+/[^}]+\\}"),
        MQTT_EXPIRIES("cm:expiries", "cm:expiries"),
        DEVICE_REFRESHED("devseen:{<app>}", "devseen:\\{[^}]+\\}"),
        DEVICE_APPS("devapps", "devapps"),
        TOKEN_SWEEP_LEASE("lease:token-sweep", "lease:token-sweep"),
        PROVIDER_QUOTA("quota:{<app>}:<provider>", "quota:\\{[^}]+\\}:[a-z]+"),
        PROVIDER_PAUSE("paused:{<app>}:<provider>", "paused:\\{[^}]+\\}:[a-z]+"),
        MESSAGE_THROTTLE("throttle:{<message>}", "throttle:\\{[^}]+\\}"),
        API_RATE("apirate:{<app>}", "apirate:\\{[^}]+\\}"),
        SCHEDULE("schedule", "schedule"),
        SCHEDULED_SEND("sched:{<message>}", "sched:\\{[^}]+\\}"),
        REPLICA_LEASE("replica:<service>:<replica>", "replica:[a-z-]+:[^{}]+"),
        AUDIT("audit", "audit");

        private final String shape;
        private final Pattern pattern;

        KeyPattern(String shape, String regex) {
            this.shape = shape;
            this.pattern = Pattern.compile(regex);
        }

        /** How the README writes the key: placeholders in angle brackets. */
        public String shape() {
            return shape;
        }

        /** A KEYS/SCAN pattern for every key of this shape (braces are literal in Redis globs). */
        public String glob() {
            return shape.replaceAll("<[^>]+>", "*");
        }

        public boolean matches(String key) {
            return pattern.matcher(key).matches();
        }

        /** The shape a live key has, if any: what a test asserts of every key it finds. */
        public static java.util.Optional<KeyPattern> of(String key) {
            return Arrays.stream(values()).filter(p -> p.matches(key)).findFirst();
        }
    }

    private static final String MQTT_BOX_PREFIX = "cm:box:";

    private RedisKeys() {
    }

    private static String appTag(String appId) {
        return "{" + appId + "}";
    }

    private static String deviceTag(String appId, String deviceId) {
        return "{" + appId + "/" + deviceId + "}";
    }

    private static String messageTag(String messageId) {
        return "{" + messageId + "}";
    }

    public static String app(String appId) {
        return "app:" + appTag(appId);
    }

    public static String appStats(String appId) {
        return "stats:" + appTag(appId);
    }

    /** An app's counts in one minute (minutes since the epoch): the console's last-hour chart. */
    public static String appStatsMinute(String appId, long minute) {
        return "statsm:" + appTag(appId) + ":" + minute;
    }

    /** An app's counts in one hour (hours since the epoch): the console's day and week charts. */
    public static String appStatsHour(String appId, long hour) {
        return "statsh:" + appTag(appId) + ":" + hour;
    }

    /** An app's recent messages by acceptance time (ms): what the message list pages through. */
    public static String appMessages(String appId) {
        return "msgs:" + appTag(appId);
    }

    public static String apiKey(String keyId) {
        return "apikey:" + keyId;
    }

    /** Single-key, so untagged: one app's claims spread over the cluster. */
    public static String idempotency(String appId, String idempotencyKey) {
        return "idem:" + appId + ":" + idempotencyKey;
    }

    /** The prefix of an app's device hashes; the library appends the device id (a bulk import). */
    public static String devicePrefix(String appId) {
        return "dev:" + appTag(appId) + ":";
    }

    public static String device(String appId, String deviceId) {
        return devicePrefix(appId) + deviceId;
    }

    /** The prefix of an app's device topic sets; the library appends the device id (a bulk import). */
    public static String deviceTopicsPrefix(String appId) {
        return "devtopics:" + appTag(appId) + ":";
    }

    public static String deviceTopics(String appId, String deviceId) {
        return deviceTopicsPrefix(appId) + deviceId;
    }

    /** The prefix of an app's topic sets; the library appends the topic name. */
    public static String topicPrefix(String appId) {
        return "topic:" + appTag(appId) + ":";
    }

    public static String topic(String appId, String topic) {
        return topicPrefix(appId) + topic;
    }

    /** The prefix of an app's token index; the library appends {@code <channel>:<token>}. */
    public static String tokenPrefix(String appId) {
        return "tok:" + appTag(appId) + ":";
    }

    public static String token(String appId, String channel, String token) {
        return tokenPrefix(appId) + channel + ":" + token;
    }

    public static String message(String messageId) {
        return "msg:" + messageTag(messageId);
    }

    public static String messageDone(String messageId) {
        return "done:" + messageTag(messageId);
    }

    public static String expansion(String messageId) {
        return "expand:" + messageTag(messageId);
    }

    public static String mqttBox(String appId, String deviceId) {
        return MQTT_BOX_PREFIX + deviceTag(appId, deviceId);
    }

    public static String mqttBoxEntries(String appId, String deviceId) {
        return "cm:boxm:" + deviceTag(appId, deviceId);
    }

    public static String mqttSession(String appId, String deviceId) {
        return "cm:session:" + deviceTag(appId, deviceId);
    }

    /** A device's MQTT credential generation, beside its session: revoking moves it on. */
    public static String mqttCredentials(String appId, String deviceId) {
        return "cm:cred:" + deviceTag(appId, deviceId);
    }

    /** When an MQTT device's last CONNECT was accepted (ms), beside its session. */
    public static String mqttConnected(String appId, String deviceId) {
        return "cm:connected:" + deviceTag(appId, deviceId);
    }

    /** The index of boxes by their earliest expiry (members are box keys). */
    public static String mqttExpiries() {
        return "cm:expiries";
    }

    /** The app and device of a box key from {@link #mqttExpiries()}, or null if it is not one. */
    public static String[] mqttBoxOwner(String boxKey) {
        if (!KeyPattern.MQTT_BOX.matches(boxKey)) {
            return null;
        }
        String tag = boxKey.substring(MQTT_BOX_PREFIX.length() + 1, boxKey.length() - 1);
        int slash = tag.indexOf('/');
        return new String[] {tag.substring(0, slash), tag.substring(slash + 1)};
    }

    /** An app's devices by last registration or refresh (ms): the index of stale tokens. */
    public static String deviceRefreshed(String appId) {
        return "devseen:" + appTag(appId);
    }

    /** The ids of apps that registered a device: what the stale-token sweep walks. */
    public static String deviceApps() {
        return "devapps";
    }

    /** Held by the one gateway replica sweeping stale tokens. */
    public static String tokenSweepLease() {
        return "lease:token-sweep";
    }

    /** An app's token bucket for one provider's quota; same tag as {@link #providerPause}, taken together. */
    public static String providerQuota(String appId, String provider) {
        return "quota:" + appTag(appId) + ":" + provider;
    }

    /** Until when (ms) an app sends nothing to a provider, after the provider's 429 with Retry-After. */
    public static String providerPause(String appId, String provider) {
        return "paused:" + appTag(appId) + ":" + provider;
    }

    /** The token bucket of a message sent at a limited rate. */
    public static String messageThrottle(String messageId) {
        return "throttle:" + messageTag(messageId);
    }

    /** An app's token bucket for its API requests at the dispatcher. */
    public static String apiRate(String appId) {
        return "apirate:" + appTag(appId);
    }

    /** Every scheduled send's due zone groups, by due time (members {@code <message>|<group>}); one key, untagged. */
    public static String schedule() {
        return "schedule";
    }

    /** A running replica's lease (a gateway, a connection-manager node); untagged, each key used alone. */
    public static String replicaLease(String service, String replicaId) {
        return "replica:" + service + ":" + replicaId;
    }

    /** A scheduled send's request and fired groups, beside its status in the message's slot. */
    public static String scheduledSend(String messageId) {
        return "sched:" + messageTag(messageId);
    }

    /** The admin audit log: one stream, untagged (written once per admin action, read by admins). */
    public static String audit() {
        return "audit";
    }
}
