package dev.herald.gateway.apns;

import com.eatthepath.pushy.apns.ApnsClient;
import com.eatthepath.pushy.apns.ApnsClientBuilder;
import com.eatthepath.pushy.apns.ApnsClientMetricsListener;
import com.eatthepath.pushy.apns.auth.ApnsSigningKey;
import dev.herald.gateway.GatewayProperties;
import dev.herald.store.app.ApnsCredential;
import dev.herald.store.app.App;
import io.netty.channel.EventLoopGroup;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One long-lived Pushy {@link ApnsClient} per app credential, as Pushy recommends; all share one
 * event loop group. When an app's credential changes (its version moves) the client is rebuilt and
 * the old one closed gracefully, letting its in-flight notifications finish.
 */
public final class ApnsClientPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ApnsClientPool.class);

    private record Entry(long version, ApnsClient client) {
    }

    private final Map<String, Entry> clients = new ConcurrentHashMap<>();
    private final GatewayProperties.Apns config;
    private final EventLoopGroup eventLoops;
    private final ApnsClientMetricsListener metrics;

    public ApnsClientPool(GatewayProperties.Apns config, EventLoopGroup eventLoops, ApnsClientMetricsListener metrics) {
        this.config = config;
        this.eventLoops = eventLoops;
        this.metrics = metrics;
    }

    public ApnsClient client(App app, ApnsCredential credential) {
        Entry entry = clients.get(app.id());
        if (entry != null && entry.version() == app.version()) {
            return entry.client();
        }
        return clients.compute(app.id(), (id, current) -> {
            if (current != null && current.version() == app.version()) {
                return current;
            }
            if (current != null) {
                current.client().close();
            }
            return new Entry(app.version(), build(credential));
        }).client();
    }

    private ApnsClient build(ApnsCredential credential) {
        URI endpoint = credential.production() ? config.productionEndpoint() : config.sandboxEndpoint();
        try {
            ApnsClientBuilder builder = new ApnsClientBuilder()
                    .setApnsServer(endpoint.getHost(), endpoint.getPort() > 0 ? endpoint.getPort() : 443)
                    .setSigningKey(ApnsSigningKey.loadFromInputStream(
                            new ByteArrayInputStream(credential.p8().getBytes(StandardCharsets.UTF_8)),
                            credential.teamId(), credential.keyId()))
                    .setConcurrentConnections(config.connections())
                    .setEventLoopGroup(eventLoops)
                    .setMetricsListener(metrics);
            if (config.trustedCertificate() != null) {
                builder.setTrustedServerCertificateChain(config.trustedCertificate().toFile());
            }
            log.info("APNs client for key {} of team {} -> {}", credential.keyId(), credential.teamId(), endpoint);
            return builder.build();
        } catch (IOException e) {
            throw new UncheckedIOException("APNs client cannot be built: " + e.getMessage(), e);
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("APNs signing key is not a valid P-256 key", e);
        }
    }

    @Override
    public void close() {
        clients.values().forEach(entry -> entry.client().close());
        clients.clear();
    }
}
