package dev.herald.sandbox;

import dev.herald.sandbox.apns.ApnsCertificate;
import dev.herald.sandbox.apns.ApnsServer;
import java.net.URI;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * Where the running sandbox can be reached: the bound ports (the real ones when configured as 0),
 * the endpoints a gateway should use, and the certificate file an APNs client should trust.
 */
@Component
public class SandboxPorts {
    private static final Logger log = LoggerFactory.getLogger(SandboxPorts.class);

    private final WebServerApplicationContext context;
    private final ApnsServer apns;
    private final ApnsCertificate certificate;
    private final SandboxProperties properties;

    SandboxPorts(WebServerApplicationContext context, ApnsServer apns, ApnsCertificate certificate,
            SandboxProperties properties) {
        this.context = context;
        this.apns = apns;
        this.certificate = certificate;
        this.properties = properties;
    }

    /** FCM HTTP v1, the OAuth token endpoint, {@code /sandbox} and {@code /actuator}. */
    public int fcmPort() {
        return context.getWebServer().getPort();
    }

    public int apnsPort() {
        return apns.port();
    }

    /** Base URL for FCM, spoken as h2c (prior knowledge) or HTTP/1.1. */
    public URI fcmEndpoint() {
        return URI.create("http://127.0.0.1:" + fcmPort());
    }

    public URI apnsEndpoint() {
        return URI.create("https://127.0.0.1:" + apnsPort());
    }

    /** PEM file of the APNs port's self-signed certificate. */
    public Path apnsCertificate() {
        return certificate.path();
    }

    /** The {@code token_uri} put in the demo service account. */
    public URI tokenUri() {
        return properties.tokenUri() != null ? properties.tokenUri() : URI.create(fcmEndpoint() + "/token");
    }

    @EventListener(ApplicationReadyEvent.class)
    void ready() {
        log.info("Provider sandbox ready: FCM {} (h2c and HTTP/1.1, token endpoint {}, control API /sandbox, Web Push /webpush), APNs {}",
                fcmEndpoint(), tokenUri(), apnsEndpoint());
    }
}
