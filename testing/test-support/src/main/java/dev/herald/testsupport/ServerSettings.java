package dev.herald.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The pinned RabbitMQ and Redis settings ({@code servers.properties} beside this class), shared
 * with the local platform's launcher (locust/src/herald_load/servers.py), so that the tests run
 * the servers as the local run does. Ports, folders and node names stay each launcher's own.
 */
final class ServerSettings {
    private static final Map<String, String> SETTINGS = load();

    private ServerSettings() {
    }

    private static Map<String, String> load() {
        Properties properties = new Properties();
        try (InputStream in = ServerSettings.class.getResourceAsStream("servers.properties")) {
            if (in == null) {
                throw new IllegalStateException("servers.properties missing beside " + ServerSettings.class);
            }
            properties.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> sorted = new TreeMap<>();
        properties.stringPropertyNames().forEach(key -> sorted.put(key, properties.getProperty(key).trim()));
        return sorted;
    }

    /** The settings under {@code prefix}, by the rest of their key (sorted). */
    private static Map<String, String> withPrefix(String prefix) {
        Map<String, String> out = new TreeMap<>();
        SETTINGS.forEach((key, value) -> {
            if (key.startsWith(prefix)) {
                out.put(key.substring(prefix.length()), value);
            }
        });
        return out;
    }

    /** {@code --option value} for each {@code redis.option}. */
    static List<String> redisArguments() {
        List<String> arguments = new ArrayList<>();
        withPrefix("redis.").forEach((option, value) -> {
            arguments.add("--" + option);
            arguments.add(value);
        });
        return arguments;
    }

    /** rabbitmq.conf lines, without the listeners' ports. */
    static List<String> rabbitConfig() {
        return withPrefix("rabbitmq.conf.").entrySet().stream()
                .map(setting -> setting.getKey() + " = " + setting.getValue()).toList();
    }

    /** The enabled_plugins file's content. */
    static String rabbitPlugins() {
        return "[" + SETTINGS.get("rabbitmq.plugins").replace(",", ", ") + "].\n";
    }

    /** Environment of the node, beyond its folders and name. */
    static Map<String, String> rabbitEnvironment() {
        return withPrefix("rabbitmq.env.");
    }
}
