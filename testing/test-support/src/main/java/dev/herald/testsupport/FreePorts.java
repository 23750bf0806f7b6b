package dev.herald.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks TCP ports that are free right now, for the servers the tests start.
 *
 * <p>Not the kernel's pick (binding port 0): that comes from the ephemeral range, which the kernel
 * also hands to outgoing connections, so between the pick and the server's bind another process's
 * connection can take the port. That happened on a busy machine (RabbitMQ's distribution port). The
 * ports come from below the ephemeral range instead, at random so that parallel runs rarely meet,
 * and each is handed out once per JVM. The same rule as locust/'s {@code herald_load.processes}.
 */
public final class FreePorts {
    private static final int LOWEST = 20_000;
    /** Linux's default start of the ephemeral range, if /proc does not say otherwise. */
    private static final int DEFAULT_EPHEMERAL_LOW = 32_768;
    private static final int ATTEMPTS = 1_000;
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private FreePorts() {
    }

    public static int next() {
        int highest = Math.max(LOWEST + 1_000, ephemeralLow()) - 1;
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, highest + 1);
            if (HANDED_OUT.add(port) && bindable(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free port in " + LOWEST + ".." + highest + " after " + ATTEMPTS + " tries");
    }

    /** On all addresses: a server listening on any of them makes the port unusable for ours. */
    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(port), 1);
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }

    private static int ephemeralLow() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
            return Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException unreadable) {
            return DEFAULT_EPHEMERAL_LOW;
        }
    }
}
