package dev.herald.sandbox.fcm;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * FCM's checks on a {@code messages:send} body, with Google's wording where it is known: one
 * target, string-only data without reserved keys, a well-formed Android ttl and priority, no
 * unknown fields (proto JSON accepts snake_case and lowerCamelCase names), and at most 4096 bytes
 * of payload ({@code data} plus {@code notification}, which is what FCM's limit counts).
 */
final class MessageValidator {
    static final int MAX_PAYLOAD_BYTES = 4096;
    private static final Set<String> BODY_FIELDS = Set.of("message", "validate_only", "validateOnly");
    private static final Set<String> MESSAGE_FIELDS = Set.of("name", "data", "notification", "android", "webpush",
            "apns", "fcm_options", "fcmOptions", "token", "topic", "condition");
    private static final Set<String> ANDROID_FIELDS = Set.of("collapse_key", "collapseKey", "priority", "ttl",
            "restricted_package_name", "restrictedPackageName", "data", "notification", "fcm_options", "fcmOptions",
            "direct_boot_ok", "directBootOk", "bandwidth_constrained_ok", "bandwidthConstrainedOk",
            "restricted_satellite_ok", "restrictedSatelliteOk");
    private static final List<String> TARGETS = List.of("token", "topic", "condition");
    private static final Set<String> RESERVED_DATA_KEYS = Set.of("from", "notification", "message_type");
    /** google.protobuf.Duration in JSON: seconds with up to nine fractional digits and an "s". */
    private static final Pattern TTL = Pattern.compile("\\d+(\\.\\d{1,9})?s");
    private static final Pattern TOPIC = Pattern.compile("(/topics/)?[a-zA-Z0-9-_.~%]{1,900}");

    private final JsonMapper json;

    MessageValidator(JsonMapper json) {
        this.json = json;
    }

    /** Null when FCM would take the body ({@code bodyBytes} long as received), else why not. */
    Violation validate(JsonNode body, int bodyBytes) {
        if (!body.isObject()) {
            return new Violation("Invalid JSON payload received. Expected an object.", null);
        }
        Violation unknown = unknownField(body, BODY_FIELDS, "");
        if (unknown != null) {
            return unknown;
        }
        JsonNode message = body.path("message");
        if (!message.isObject()) {
            return new Violation("Request contains an invalid argument: message is required.", "message");
        }
        unknown = unknownField(message, MESSAGE_FIELDS, "message");
        if (unknown != null) {
            return unknown;
        }
        Violation violation = target(message);
        if (violation == null) {
            violation = stringMap(message.path("data"), "message.data");
        }
        if (violation == null) {
            violation = notification(message.path("notification"), "message.notification");
        }
        if (violation == null) {
            violation = android(message.path("android"));
        }
        // The payload is part of the body, and re-serialising it never makes it longer, so only a
        // body over the limit needs measuring.
        if (violation == null && bodyBytes > MAX_PAYLOAD_BYTES && payloadBytes(message) > MAX_PAYLOAD_BYTES) {
            violation = new Violation("Android message is too big", null);
        }
        return violation;
    }

    private static Violation target(JsonNode message) {
        List<String> set = new ArrayList<>();
        for (String target : TARGETS) {
            if (message.has(target)) {
                set.add(target);
            }
        }
        if (set.isEmpty()) {
            return new Violation("Recipient of the message is not set.", "message");
        }
        if (set.size() > 1) {
            return new Violation("Invalid JSON payload received. Oneof field 'target' is already set. Cannot set '"
                    + set.get(1) + "'", "message." + set.get(1));
        }
        String name = set.getFirst();
        JsonNode value = message.path(name);
        if (!value.isString() || value.asString().isBlank()) {
            return new Violation("Invalid value at 'message." + name + "' (TYPE_STRING), " + value, "message." + name);
        }
        if (name.equals("topic") && !TOPIC.matcher(value.asString()).matches()) {
            return new Violation("Invalid topic name: " + value.asString(), "message.topic");
        }
        return null;
    }

    /** A {@code map<string, string>}: every value a string, and for data no reserved keys. */
    private static Violation stringMap(JsonNode map, String path) {
        if (map.isMissingNode() || map.isNull()) {
            return null;
        }
        if (!map.isObject()) {
            return new Violation("Invalid value at '" + path + "' (type.googleapis.com/google.protobuf.Struct), " + map, path);
        }
        int index = 0;
        for (Map.Entry<String, JsonNode> entry : map.properties()) {
            if (!entry.getValue().isString()) {
                String field = path + "[" + index + "].value";
                return new Violation("Invalid value at '" + field + "' (TYPE_STRING), " + entry.getValue(), field);
            }
            String key = entry.getKey();
            if (RESERVED_DATA_KEYS.contains(key) || key.startsWith("google") || key.startsWith("gcm")) {
                String field = path + "[" + index + "].key";
                return new Violation("Invalid data payload key: " + key + " (reserved words and keys starting with"
                        + " 'google' or 'gcm' are not allowed)", field);
            }
            index++;
        }
        return null;
    }

    private static Violation notification(JsonNode notification, String path) {
        if (notification.isMissingNode() || notification.isNull()) {
            return null;
        }
        if (!notification.isObject()) {
            return new Violation("Invalid value at '" + path + "', expected an object", path);
        }
        for (String field : List.of("title", "body", "image")) {
            JsonNode value = notification.path(field);
            if (!value.isMissingNode() && !value.isNull() && !value.isString()) {
                return new Violation("Invalid value at '" + path + "." + field + "' (TYPE_STRING), " + value,
                        path + "." + field);
            }
        }
        return null;
    }

    private static Violation android(JsonNode android) {
        if (android.isMissingNode() || android.isNull()) {
            return null;
        }
        if (!android.isObject()) {
            return new Violation("Invalid value at 'message.android', expected an object", "message.android");
        }
        Violation unknown = unknownField(android, ANDROID_FIELDS, "message.android");
        if (unknown != null) {
            return unknown;
        }
        JsonNode ttl = android.path("ttl");
        if (!ttl.isMissingNode() && !(ttl.isString() && TTL.matcher(ttl.asString()).matches())) {
            return new Violation("Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), "
                    + ttl, "message.android.ttl");
        }
        JsonNode priority = android.path("priority");
        if (!priority.isMissingNode() && !(priority.isString()
                && (priority.asString().equalsIgnoreCase("normal") || priority.asString().equalsIgnoreCase("high")))) {
            return new Violation("Invalid value at 'message.android.priority'"
                    + " (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), " + priority,
                    "message.android.priority");
        }
        return stringMap(android.path("data"), "message.android.data");
    }

    private static Violation unknownField(JsonNode object, Set<String> known, String path) {
        for (String name : object.propertyNames()) {
            if (!known.contains(name)) {
                String at = path.isEmpty() ? "" : " at '" + path + "'";
                return new Violation("Invalid JSON payload received. Unknown name \"" + name + "\"" + at
                        + ": Cannot find field.", path.isEmpty() ? name : path + "." + name);
            }
        }
        return null;
    }

    /** The part of the message FCM's 4096-byte limit counts: data and notification, as JSON. */
    private int payloadBytes(JsonNode message) {
        int bytes = 0;
        for (String part : List.of("data", "notification")) {
            JsonNode node = message.path(part);
            if (!node.isMissingNode()) {
                bytes += json.writeValueAsBytes(node).length;
            }
        }
        return bytes;
    }
}
