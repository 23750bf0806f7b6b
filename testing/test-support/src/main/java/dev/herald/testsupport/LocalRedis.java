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
 * A real redis-server on a free loopback port with the pinned settings ({@link ServerSettings}: no
 * persistence, loopback only), one per test JVM, started on first use.
 */
public final class LocalRedis {
    private static LocalRedis instance;

    private final int port;
    private final List<String> command;
    private final Path dir;
    private ServerProcess process;

    private LocalRedis(int port, List<String> command, Path dir, ServerProcess process) {
        this.port = port;
        this.command = command;
        this.dir = dir;
        this.process = process;
    }

    public static synchronized LocalRedis get() {
        if (instance == null) {
            instance = start();
        }
        return instance;
    }

    public static LocalRedis start() {
        try {
            int port = FreePorts.next();
            Path dir = Files.createTempDirectory("herald-redis-");
            String redis = ServerProcess.executable("/usr/bin/redis-server", "/usr/local/bin/redis-server");
            List<String> command = new ArrayList<>(List.of(redis, "--port", String.valueOf(port)));
            command.addAll(ServerSettings.redisArguments());
            command.addAll(List.of("--dir", dir.toString()));
            return new LocalRedis(port, command, dir, startProcess(port, command, dir));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ServerProcess startProcess(int port, List<String> command, Path dir) {
        ServerProcess process = ServerProcess.start("redis", command, Map.of(), dir);
        process.awaitReady(() -> ping(port), Duration.ofSeconds(20));
        return process;
    }

    /**
     * Stops the server and starts it again on the same port, as a restart of a Redis with persistence
     * would: the pinned settings turn persistence off, so the data (functions included) is saved to
     * its folder first ({@code SAVE}) and loaded from there by the new process.
     */
    public synchronized void restart() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            socket.getOutputStream().write("SAVE\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] reply = new byte[5];
            int read = socket.getInputStream().read(reply);
            if (read <= 0 || !new String(reply, 0, read, StandardCharsets.US_ASCII).startsWith("+OK")) {
                throw new IllegalStateException("redis on port " + port + " did not save before its restart");
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        process.close();
        process = startProcess(port, command, dir);
    }

    private static boolean ping(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
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
        return "redis://127.0.0.1:" + port;
    }

    public synchronized ServerProcess process() {
        return process;
    }
}
