package dev.herald.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A real redis-server on a free loopback port with the pinned settings ({@link ServerSettings}:
 * append-only file, loopback only), one per test JVM, started on first use; {@link #start()} gives a private one.
 */
public final class LocalRedis {
    private static LocalRedis instance;

    private final String host;
    private final int port;
    private final List<String> command;
    private final Path dir;
    private ServerProcess process;

    private LocalRedis(String host, int port, List<String> command, Path dir) {
        this.host = host;
        this.port = port;
        this.command = command;
        this.dir = dir;
        this.process = startProcess();
    }

    public static synchronized LocalRedis get() {
        if (instance == null) {
            instance = start();
        }
        return instance;
    }

    public static LocalRedis start() {
        return start(null);
    }

    /** A private server inside {@code namespace}, listening on its address (null: on loopback). */
    public static LocalRedis start(NetworkNamespace namespace) {
        try {
            int port = FreePorts.next();
            Path dir = Files.createTempDirectory("herald-redis-");
            String redis = ServerProcess.executable("/usr/bin/redis-server", "/usr/local/bin/redis-server");
            List<String> command = new ArrayList<>(List.of(redis, "--port", String.valueOf(port)));
            command.addAll(ServerSettings.redisArguments());
            command.addAll(List.of("--dir", dir.toString()));
            String host = "127.0.0.1";
            if (namespace != null) {
                host = namespace.address();
                // The last bind wins over the pinned loopback one; protected mode would refuse every
                // client from outside the namespace (no password: only the test's own reach it).
                command.addAll(List.of("--bind", host, "--protected-mode", "no"));
                command = namespace.command(command);
            }
            return new LocalRedis(host, port, command, dir);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private ServerProcess startProcess() {
        ServerProcess started = ServerProcess.start("redis", command, Map.of(), dir);
        started.awaitReady(this::ping, Duration.ofSeconds(20));
        return started;
    }

    /**
     * Stops the server (SIGTERM, as a rolling restart or an evicted pod would) and starts it again
     * on the same port: the pinned settings keep an append-only file, flushed on shutdown, so the
     * new process loads everything the old one acknowledged (functions included). A crash instead
     * (SIGKILL) can lose the last second or two of writes: appendfsync everysec postpones a write
     * while the previous fsync is still running (BrokerAndCacheFaultsIT saw one batch's outcomes lost).
     */
    public synchronized void restart() {
        process.close();
        process = startProcess();
    }

    /** Stops the server for good (SIGTERM). */
    public synchronized void stop() {
        process.close();
    }

    private boolean ping() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 200);
            socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] reply = new byte[7];
            int read = socket.getInputStream().read(reply);
            return read > 0 && new String(reply, 0, read, StandardCharsets.US_ASCII).startsWith("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    public int port() {
        return port;
    }

    public String uri() {
        return "redis://" + host + ":" + port;
    }

    public synchronized ServerProcess process() {
        return process;
    }
}
