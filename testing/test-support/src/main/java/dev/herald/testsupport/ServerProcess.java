package dev.herald.testsupport;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * A server started as a child process, its output in a log file, stopped when the JVM exits.
 * Readiness is polled with a caller-supplied probe: a real check, not a fixed sleep.
 */
public final class ServerProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;

    private ServerProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    public static ServerProcess start(String name, List<String> command, Map<String, String> env, Path workDir) {
        try {
            Files.createDirectories(workDir);
            Path log = workDir.resolve(name + ".log");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(env);
            ServerProcess server = new ServerProcess(name, builder.start(), log);
            Runtime.getRuntime().addShutdownHook(new Thread(server::close, "stop-" + name));
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + command, e);
        }
    }

    /** Polls {@code ready} until it holds, failing fast if the process dies or the time runs out. */
    public ServerProcess awaitReady(BooleanSupplier ready, Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (!ready.getAsBoolean()) {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + "; log: " + tail());
            }
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException(name + " not ready after " + timeout + "; log: " + tail());
            }
            try {
                Thread.sleep(100); // polling interval of a readiness probe, not a stand-in for synchronisation
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for " + name, e);
            }
        }
        return this;
    }

    /** {@link #awaitReady} on a Spring Boot service's readiness probe ({@code /actuator/health/readiness} answering 200). */
    public ServerProcess awaitHttpReady(int port, Duration timeout) {
        HttpRequest readiness = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness"))
                .timeout(Duration.ofSeconds(2)).GET().build();
        try (HttpClient client = HttpClient.newHttpClient()) {
            return awaitReady(() -> {
                try {
                    return client.send(readiness, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                } catch (IOException e) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }, timeout);
        }
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL: the process gets no chance to clean up. */
    public void kill() {
        process.destroyForcibly();
        waitForExit();
    }

    /** SIGKILL to the process and all its descendants (a server its start script runs as a child). */
    public void killTree() {
        process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
        kill();
    }

    /** SIGTERM, then SIGKILL if it has not exited within 30 s. */
    @Override
    public void close() {
        if (!process.isAlive()) {
            return;
        }
        process.toHandle().descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public int waitForExit() {
        try {
            return process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public String tail() {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join(System.lineSeparator(), lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    public Path log() {
        return log;
    }

    static String executable(String... candidates) {
        for (String candidate : candidates) {
            if (new File(candidate).canExecute()) {
                return candidate;
            }
        }
        throw new IllegalStateException("none of " + List.of(candidates)
                + " is installed; run scripts/install-deps.sh (installs rabbitmq-server and redis-server)");
    }
}
