package dev.herald.testsupport;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real RabbitMQ node (Debian's rabbitmq-server) with the pinned settings ({@link ServerSettings}:
 * management and Prometheus plugins, loopback only), on free loopback ports, with its own node
 * name, data and Erlang cookie so several can run side by side.
 * One per test JVM via {@link #get()}; {@link #start()} gives a private one (e.g. to stop it).
 */
public final class LocalRabbit {
    private static LocalRabbit instance;

    private final String node;
    private final int port;
    private final int managementPort;
    private final int prometheusPort;
    private final Path home;
    private ServerProcess process;
    private final List<String> command;
    private final Map<String, String> env;
    private final Path dir;

    private LocalRabbit(String node, int port, int managementPort, int prometheusPort, Path dir, List<String> command,
            Map<String, String> env) {
        this.node = node;
        this.port = port;
        this.managementPort = managementPort;
        this.prometheusPort = prometheusPort;
        this.dir = dir;
        this.home = dir.resolve("home");
        this.command = command;
        this.env = env;
    }

    public static synchronized LocalRabbit get() {
        if (instance == null) {
            instance = start();
        }
        return instance;
    }

    public static LocalRabbit start() {
        return start(null);
    }

    /**
     * A private node; with {@code cookie}, that Erlang cookie (nodes of one cluster share theirs).
     * The ports are free when picked, but the node binds them seconds later (Erlang boots slowly
     * on a busy machine) and another process can take one meanwhile (NodeLossIT flaked so): a node
     * that does not come up is started again on fresh ports, up to three times.
     */
    static LocalRabbit start(String cookie) {
        for (int attempt = 1; ; attempt++) {
            LocalRabbit rabbit = configure(cookie);
            try {
                rabbit.startProcess();
                return rabbit;
            } catch (IllegalStateException notReady) {
                rabbit.process.close();
                if (attempt == 3) {
                    throw notReady;
                }
                System.err.printf("LocalRabbit: node %s did not start (attempt %d), trying fresh ports: %s%n",
                        rabbit.node, attempt, notReady.getMessage());
            }
        }
    }

    private static LocalRabbit configure(String cookie) {
        try {
            int port = FreePorts.next();
            int management = FreePorts.next();
            int dist = FreePorts.next();
            int prometheus = FreePorts.next();
            Path dir = Files.createTempDirectory("herald-rabbit-");
            Files.createDirectories(dir.resolve("home"));
            if (cookie != null) {
                Path file = dir.resolve("home").resolve(".erlang.cookie");
                Files.writeString(file, cookie);
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--------"));
            }
            List<String> config = new ArrayList<>(ServerSettings.rabbitConfig());
            config.addAll(List.of(
                    "listeners.tcp.default = 127.0.0.1:" + port,
                    "management.tcp.port = " + management,
                    "prometheus.tcp.port = " + prometheus,
                    ""));
            Files.writeString(dir.resolve("rabbitmq.conf"), String.join("\n", config));
            Files.writeString(dir.resolve("enabled_plugins"), ServerSettings.rabbitPlugins());
            // Empty on purpose: the node reads it instead of /etc/rabbitmq's.
            Files.writeString(dir.resolve("rabbitmq-env.conf"), "");
            String node = "herald" + port + "@localhost";
            Map<String, String> env = new HashMap<>(ServerSettings.rabbitEnvironment());
            env.putAll(Map.of(
                    "HOME", dir.resolve("home").toString(),
                    "RABBITMQ_NODENAME", node,
                    "RABBITMQ_DIST_PORT", String.valueOf(dist),
                    "RABBITMQ_MNESIA_BASE", dir.resolve("mnesia").toString(),
                    "RABBITMQ_LOG_BASE", dir.resolve("log").toString(),
                    "RABBITMQ_CONFIG_FILE", dir.resolve("rabbitmq.conf").toString(),
                    "RABBITMQ_CONF_ENV_FILE", dir.resolve("rabbitmq-env.conf").toString(),
                    "RABBITMQ_ENABLED_PLUGINS_FILE", dir.resolve("enabled_plugins").toString(),
                    "RABBITMQ_PID_FILE", dir.resolve("rabbit.pid").toString()));
            String server = ServerProcess.executable("/usr/lib/rabbitmq/bin/rabbitmq-server");
            return new LocalRabbit(node, port, management, prometheus, dir, List.of(server), env);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private void startProcess() {
        process = ServerProcess.start("rabbitmq", command, env, dir);
        process.awaitReady(this::managementAnswers, Duration.ofSeconds(90));
    }

    /** Stops the node (as an outage would) keeping its data, so {@link #restart()} brings the queues back. */
    public void stop() {
        process.close();
    }

    public void restart() {
        startProcess();
    }

    /** SIGKILL to the node's Erlang VM (its start script's child), as a crashed machine would: no clean shutdown. */
    public void kill() {
        process.killTree();
    }

    /**
     * Runs rabbitmqctl against this node, e.g. {@code ctl("set_vm_memory_high_watermark", "0")} to
     * raise its memory alarm; returns its output, failing if it exits non-zero.
     */
    public String ctl(String... arguments) {
        List<String> command = new ArrayList<>(List.of(ServerProcess.executable("/usr/lib/rabbitmq/bin/rabbitmqctl"),
                "-n", node));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).directory(dir.toFile());
        builder.environment().putAll(env);
        try {
            Process ctl = builder.start();
            String output = new String(ctl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!ctl.waitFor(120, java.util.concurrent.TimeUnit.SECONDS) || ctl.exitValue() != 0) {
                throw new IllegalStateException("rabbitmqctl " + String.join(" ", arguments) + " failed: " + output);
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private boolean amqpOpen() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private boolean managementAnswers() {
        if (!amqpOpen()) {
            return false;
        }
        try {
            return managementGet("/api/overview").statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    /** GET on the management API as guest, e.g. {@code /api/queues/%2F/herald.send.high}. */
    public HttpResponse<String> managementGet(String path) throws IOException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + path))
                .header("Authorization", "Basic " + Base64.getEncoder()
                        .encodeToString("guest:guest".getBytes(StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(5))
                .GET().build();
        try (HttpClient client = HttpClient.newHttpClient()) {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    /** RabbitMQ's own Prometheus metrics (rabbitmq_prometheus plugin, per-object metrics on). */
    public String prometheusScrape() throws IOException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + prometheusPort + "/metrics"))
                .timeout(Duration.ofSeconds(10)).GET().build();
        // HTTP/1.1: the JDK client's default h2c upgrade, answered by the plugin's server, was seen
        // to fail with "Frame type(100) ... exceeds MAX_FRAME_SIZE" on a large scrape.
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            return client.send(request, HttpResponse.BodyHandlers.ofString()).body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    public String node() {
        return node;
    }

    public int port() {
        return port;
    }

    public int managementPort() {
        return managementPort;
    }

    public String host() {
        return "127.0.0.1";
    }

    public Path home() {
        return home;
    }
}
