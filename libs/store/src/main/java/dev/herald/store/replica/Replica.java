package dev.herald.store.replica;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Instant;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

/**
 * What one running replica says of itself in its lease, at its last renewal.
 *
 * @param id        unique among the service's replicas (in Kubernetes the pod name, else the host
 *                  name with a random suffix)
 * @param startedAt when the process started
 * @param version   Herald's version in that process
 * @param figures   the service's own gauges at the renewal (the gateway's {@code inFlight} and
 *                  {@code deliveriesPerSecond}, the connection manager's {@code connections})
 */
public record Replica(String id, Instant startedAt, String version, Map<String, Long> figures) {
    private static final String VERSION = readVersion();

    public Replica {
        figures = Map.copyOf(figures);
    }

    /** This process's replica with the given figures. */
    public static Replica of(String id, Instant startedAt, Map<String, Long> figures) {
        return new Replica(id, startedAt, VERSION, figures);
    }

    public long figure(String name) {
        return figures.getOrDefault(name, 0L);
    }

    /** The host name (a pod's name in Kubernetes) and a random suffix: unique when several run on one host. */
    public static String newId(String fallbackHost) {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "-");
        } catch (UnknownHostException e) {
            host = fallbackHost;
        }
        return host + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static String readVersion() {
        try (InputStream in = Replica.class.getResourceAsStream("version.properties")) {
            Properties properties = new Properties();
            if (in != null) {
                properties.load(in);
            }
            return properties.getProperty("version", "unknown");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
