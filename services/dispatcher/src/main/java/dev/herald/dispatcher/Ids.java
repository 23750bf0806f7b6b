package dev.herald.dispatcher;

import dev.herald.dispatcher.problem.Problems;
import java.util.regex.Pattern;

/** The shapes of identifiers the API accepts; anything else is refused with 400 before it reaches Redis. */
public final class Ids {
    /**
     * App ids. No ':' (nor braces): Redis keys are built as {@code <kind>:{<appId>}:<rest>} or
     * {@code <kind>:<appId>:<rest>} (devices, topics, idempotency keys; the store's RedisKeys), and
     * only an app id without ':' makes such a key name one app. Were ':'
     * allowed, app "a" registering device "b:c" would write the key of app "a:b"'s device "c".
     */
    public static final String APP_ID = "[A-Za-z0-9._-]{1,128}";
    /** Device ids; ':' is allowed (MAC addresses, URNs) because it follows the app id in every key. */
    public static final String DEVICE_ID = "[A-Za-z0-9._:-]{1,128}";
    /** Topic names, as FCM accepts them. */
    public static final String TOPIC = "[A-Za-z0-9_.~%-]{1,100}";
    /** Provider tokens: printable ASCII without spaces. */
    public static final String TOKEN = "[\\x21-\\x7E]{1,4096}";
    /** API key ids as issued ({@code hk_<keyId>_...}). */
    public static final String KEY_ID = "[0-9a-f]{8}";
    /** Message ids as issued (UUID). */
    public static final String MESSAGE_ID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

    private static final Pattern APP_ID_PATTERN = Pattern.compile(APP_ID);
    private static final Pattern DEVICE_ID_PATTERN = Pattern.compile(DEVICE_ID);
    private static final Pattern TOPIC_PATTERN = Pattern.compile(TOPIC);
    private static final Pattern MESSAGE_ID_PATTERN = Pattern.compile(MESSAGE_ID);

    private Ids() {
    }

    public static String appId(String value) {
        return check("appId", value, APP_ID_PATTERN, APP_ID);
    }

    public static String deviceId(String value) {
        return check("deviceId", value, DEVICE_ID_PATTERN, DEVICE_ID);
    }

    public static String topic(String value) {
        return check("topic", value, TOPIC_PATTERN, TOPIC);
    }

    /** For callers that answer a malformed app id otherwise than with 400 (the auth check: 404). */
    public static boolean isAppId(String value) {
        return value != null && APP_ID_PATTERN.matcher(value).matches();
    }

    public static boolean isMessageId(String value) {
        return value != null && MESSAGE_ID_PATTERN.matcher(value).matches();
    }

    private static String check(String name, String value, Pattern pattern, String shape) {
        if (value == null || !pattern.matcher(value).matches()) {
            throw Problems.invalidField(name, "must match " + shape);
        }
        return value;
    }
}
