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
        try {
            int port = FreePorts.next();
            int management = FreePorts.next();
            int dist = FreePorts.next();
            int prometheus = FreePorts.next();
            Path dir = Files.createTempDirectory("herald-rabbit-");
            Files.createDirectories(dir.resolve("home"));
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
            LocalRabbit rabbit = new LocalRabbit(node, port, management, prometheus, dir, List.of(server), env);
            rabbit.startProcess();
            return rabbit;
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
