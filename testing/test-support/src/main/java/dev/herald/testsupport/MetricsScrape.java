package dev.herald.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Keeps a Prometheus scrape of a running service (or RabbitMQ) in the module's
 * {@code target/metrics-scrape/<name>.prom}. The chart checks (scripts/k8s/test-charts.sh) compare
 * every metric name a Grafana dashboard or alert rule uses with these scrapes, so dashboards cannot
 * name a metric the code does not export.
 */
public final class MetricsScrape {
    private MetricsScrape() {
    }

    /** Writes (replaces) the scrape called {@code name}; returns the file. */
    public static Path write(String name, String exposition) {
        try {
            Path dir = Files.createDirectories(Path.of("target", "metrics-scrape"));
            return Files.writeString(dir.resolve(name + ".prom"), exposition);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
