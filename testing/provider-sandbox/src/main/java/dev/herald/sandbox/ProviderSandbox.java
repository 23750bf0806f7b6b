package dev.herald.sandbox;

import dev.herald.sandbox.counts.DeliveryCounts;
import dev.herald.sandbox.demo.DemoCredentials;
import dev.herald.sandbox.faults.FaultInjector;
import dev.herald.sandbox.webpush.TestSubscriptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.logging.LoggingApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A sandbox running inside the caller's JVM, for tests of other modules:
 * <pre>{@code
 * try (ProviderSandbox sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=5")) {
 *     URI fcm = sandbox.fcmEndpoint();        // http://127.0.0.1:<port>, h2c or HTTP/1.1
 *     URI apns = sandbox.apnsEndpoint();      // https://127.0.0.1:<port>, trust sandbox.apnsCertificate()
 *     Map<String, Object> account = sandbox.demoServiceAccount();
 *     ...
 *     assertThat(sandbox.counts().received("token-1").fcm()).isEqualTo(1);
 * }
 * }</pre>
 * Unless the arguments say otherwise both ports are ephemeral and the APNs certificate goes to a
 * fresh temporary file, so parallel runs do not collide. The host's logging setup, health checks
 * and global meter registry are left alone.
 */
public final class ProviderSandbox implements AutoCloseable {
    private final ConfigurableApplicationContext context;
    private final SandboxPorts ports;

    private ProviderSandbox(ConfigurableApplicationContext context) {
        this.context = context;
        this.ports = context.getBean(SandboxPorts.class);
    }

    /** Starts a sandbox; {@code args} are Spring Boot command-line arguments ({@code --key=value}). */
    public static ProviderSandbox start(String... args) {
        List<String> arguments = new ArrayList<>(Arrays.asList(args));
        if (!given(args, "server.port") && !given(args, "herald.sandbox.fcm-port")) {
            arguments.add("--server.port=0");
        }
        if (!given(args, "herald.sandbox.apns-port")) {
            arguments.add("--herald.sandbox.apns-port=0");
        }
        if (!given(args, "herald.sandbox.apns-certificate-path")) {
            arguments.add("--herald.sandbox.apns-certificate-path=" + temporaryCertificatePath());
        }
        // The host's classpath brings its own auto-configurations (RabbitMQ, Redis, ...): keep their
        // health checks and meters out of the sandbox, and the sandbox's meters out of the host's
        // global registry.
        defaults(args, arguments, Map.of(
                "spring.main.banner-mode", "off",
                "management.health.defaults.enabled", "false",
                "management.health.ping.enabled", "true",
                "management.metrics.use-global-registry", "false"));
        SpringApplicationBuilder builder = new SpringApplicationBuilder(ProviderSandboxApplication.class)
                .main(ProviderSandboxApplication.class);
        // Boot would re-initialise the JVM-wide logging system with the sandbox's settings.
        builder.application().setListeners(builder.application().getListeners().stream()
                .filter(listener -> !(listener instanceof LoggingApplicationListener)).toList());
        return new ProviderSandbox(builder.run(arguments.toArray(String[]::new)));
    }

    public int fcmPort() {
        return ports.fcmPort();
    }

    public int apnsPort() {
        return ports.apnsPort();
    }

    public URI fcmEndpoint() {
        return ports.fcmEndpoint();
    }

    public URI apnsEndpoint() {
        return ports.apnsEndpoint();
    }

    /** PEM file of the APNs certificate, for Pushy's {@code setTrustedServerCertificateChain}. */
    public Path apnsCertificate() {
        return ports.apnsCertificate();
    }

    /** The demo service-account JSON object, its {@code token_uri} pointing at this sandbox. */
    public Map<String, Object> demoServiceAccount() {
        return context.getBean(DemoCredentials.class).serviceAccount(ports.tokenUri());
    }

    /** Demo APNs credentials: {@code p8}, {@code keyId}, {@code teamId}, {@code topic}, {@code environment}. */
    public Map<String, Object> demoApns() {
        return context.getBean(DemoCredentials.class).apns();
    }

    /** The Web Push service's test subscriptions: {@code issue(names, applicationServerKey)}, {@code lastPayload(name)}. */
    public TestSubscriptions webPush() {
        return context.getBean(TestSubscriptions.class);
    }

    /** Delivery counts: {@code received(token)}, {@code stats()}, {@code reset()}. */
    public DeliveryCounts counts() {
        return context.getBean(DeliveryCounts.class);
    }

    /** Fault injection: {@code faults()}, {@code set(Faults)}, {@code update(FaultsUpdate)}, {@code restore()}. */
    public FaultInjector faults() {
        return context.getBean(FaultInjector.class);
    }

    public ConfigurableApplicationContext context() {
        return context;
    }

    @Override
    public void close() {
        context.close();
    }

    private static void defaults(String[] args, List<String> arguments, Map<String, String> defaults) {
        defaults.forEach((key, value) -> {
            if (!given(args, key)) {
                arguments.add("--" + key + "=" + value);
            }
        });
    }

    private static boolean given(String[] args, String key) {
        return Arrays.stream(args).anyMatch(arg -> arg.startsWith("--" + key + "="));
    }

    private static Path temporaryCertificatePath() {
        try {
            Path directory = Files.createTempDirectory("herald-sandbox-");
            directory.toFile().deleteOnExit();
            Path certificate = directory.resolve("apns.pem");
            certificate.toFile().deleteOnExit(); // registered after the directory, so deleted before it
            return certificate;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for the APNs certificate", e);
        }
    }
}
