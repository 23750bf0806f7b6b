package dev.herald.sandbox.apns;

import dev.herald.sandbox.ConnectionFlushes;
import dev.herald.sandbox.SandboxProperties;
import dev.herald.sandbox.counts.DeliveryCounts;
import dev.herald.sandbox.counts.RequestMetrics;
import dev.herald.sandbox.faults.FaultInjector;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.stereotype.Component;
import reactor.netty.DisposableServer;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;
import tools.jackson.databind.json.JsonMapper;

/**
 * The APNs port: a Reactor Netty server speaking HTTP/2 over TLS only (ALPN h2, as Apple does),
 * on the same event loops as the FCM port. Started and stopped with the application context.
 */
@Component
public class ApnsServer implements SmartLifecycle {
    private static final Logger log = LoggerFactory.getLogger(ApnsServer.class);
    /** Apple advertises a high stream limit once a connection is authenticated. */
    private static final int MAX_CONCURRENT_STREAMS = 1000;

    private final SandboxProperties properties;
    private final ApnsCertificate certificate;
    private final ReactorResourceFactory resources;
    private final ApnsHandler handler;
    private volatile DisposableServer server;

    public ApnsServer(SandboxProperties properties, ApnsCertificate certificate, ReactorResourceFactory resources,
            JsonMapper json, FaultInjector faults, DeliveryCounts counts, RequestMetrics metrics) {
        this.properties = properties;
        this.certificate = certificate;
        this.resources = resources;
        this.handler = new ApnsHandler(json, faults, counts, metrics);
    }

    @Override
    public void start() {
        Http2SslContextSpec tls = Http2SslContextSpec.forServer(certificate.privateKey(), certificate.certificate());
        server = ConnectionFlushes.consolidated(HttpServer.create())
                .port(properties.apnsPort())
                .runOn(resources.getLoopResources())
                .protocol(HttpProtocol.H2)
                .secure(spec -> spec.sslContext(tls))
                .http2Settings(settings -> settings.maxConcurrentStreams(MAX_CONCURRENT_STREAMS))
                .handle(handler::handle)
                .bindNow();
        log.info("APNs sandbox listening on https://127.0.0.1:{} (HTTP/2 over TLS; trust {})", port(), certificate.path());
    }

    @Override
    public void stop() {
        DisposableServer running = server;
        if (running != null) {
            running.disposeNow(Duration.ofSeconds(10));
            server = null;
        }
    }

    @Override
    public boolean isRunning() {
        return server != null;
    }

    /**
     * After the Reactor resources (phase 0) so their event loops exist, and stopped before them;
     * the same phase as the FCM web server.
     */
    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 2048;
    }

    /** The bound port (the real one when configured as 0); -1 when not running. */
    public int port() {
        DisposableServer running = server;
        return running == null ? -1 : running.port();
    }
}
