package dev.herald.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A real Redis Cluster of three masters (no replicas) from Debian's redis-server on free loopback
 * ports, one per test JVM, started on first use: each node with {@code cluster-enabled yes}, joined
 * by {@code redis-cli --cluster create}, ready once every node reports {@code cluster_state:ok}.
 */
public final class LocalRedisCluster {
    private static final int MASTERS = 3;
    private static LocalRedisCluster instance;

    private final List<Integer> ports;

    private LocalRedisCluster(List<Integer> ports) {
        this.ports = List.copyOf(ports);
    }

    public static synchronized LocalRedisCluster get() {
        if (instance == null) {
            instance = start();
        }
        return instance;
    }

    private static LocalRedisCluster start() {
        try {
            String redis = ServerProcess.executable("/usr/bin/redis-server", "/usr/local/bin/redis-server");
            String cli = ServerProcess.executable("/usr/bin/redis-cli", "/usr/local/bin/redis-cli");
            List<Integer> ports = new ArrayList<>();
            List<ServerProcess> nodes = new ArrayList<>();
            for (int i = 0; i < MASTERS; i++) {
                int port = FreePorts.next();
                // The cluster bus port is set too: the default (port + 10000) may not be free.
                int busPort = FreePorts.next();
                Path dir = Files.createTempDirectory("herald-redis-cluster-" + port + "-");
                ServerProcess node = ServerProcess.start("redis", List.of(redis,
                                "--port", String.valueOf(port), "--bind", "127.0.0.1",
                                "--cluster-enabled", "yes", "--cluster-port", String.valueOf(busPort),
                                "--cluster-config-file", dir.resolve("nodes.conf").toString(),
                                "--save", "", "--appendonly", "no", "--dir", dir.toString()),
                        Map.of(), dir);
                node.awaitReady(() -> reply(cli, port, "PING").startsWith("PONG"), Duration.ofSeconds(20));
                ports.add(port);
                nodes.add(node);
            }
            List<String> create = new ArrayList<>(List.of(cli, "--cluster", "create"));
            ports.forEach(port -> create.add("127.0.0.1:" + port));
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            String created = run(create);
            if (!created.contains("All 16384 slots covered")) {
                throw new IllegalStateException("redis-cli --cluster create failed: " + created);
            }
            // Polled on every node: each must have learnt the slot map before a client asks it.
            for (int i = 0; i < MASTERS; i++) {
                int port = ports.get(i);
                nodes.get(i).awaitReady(() -> reply(cli, port, "CLUSTER", "INFO").contains("cluster_state:ok"), Duration.ofSeconds(30));
            }
            return new LocalRedisCluster(ports);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String reply(String cli, int port, String... command) {
        List<String> line = new ArrayList<>(List.of(cli, "-h", "127.0.0.1", "-p", String.valueOf(port)));
        line.addAll(List.of(command));
        try {
            return run(line);
        } catch (IllegalStateException e) {
            return "";
        }
    }

    private static String run(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output;
            try (InputStream in = process.getInputStream()) {
                output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("timed out: " + command);
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public List<Integer> ports() {
        return ports;
    }

    /** The seed URIs of every master, comma-separated (the form {@code herald.redis-uri} takes). */
    public String uri() {
        return ports.stream().map(port -> "redis://127.0.0.1:" + port).collect(Collectors.joining(","));
    }
}
