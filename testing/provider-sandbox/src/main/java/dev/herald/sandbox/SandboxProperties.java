package dev.herald.sandbox;

import dev.herald.sandbox.faults.Faults;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Sandbox settings. The FCM port is {@code server.port} (alias {@code herald.sandbox.fcm-port}, default
 * 9090, in provider-sandbox.yaml). {@link Faults} is nested: {@code herald.sandbox.faults.*}.
 *
 * @param apnsPort              APNs (HTTP/2 over TLS) port; 0 picks a free one, see {@link SandboxPorts}
 * @param apnsCertificatePath   where the self-signed APNs certificate is written as PEM so clients can
 *                              trust it; default {@code herald-sandbox-apns.pem} in the directory
 *                              {@code java.io.tmpdir} names. Read instead when apns-private-key-path is set
 * @param apnsPrivateKeyPath    PEM private key (PKCS#8, or RSA/EC as OpenSSL and Helm write them) of a
 *                              certificate made elsewhere, e.g. a Kubernetes TLS Secret's {@code tls.key}
 *                              (charts/provider-sandbox): when set, the APNs port serves it with the
 *                              certificate read from apns-certificate-path, and apns-certificate-names
 *                              is unused; unset, the sandbox makes its own key and certificate at startup
 * @param apnsCertificateNames  DNS names and IP addresses the certificate is valid for; add the
 *                              sandbox's service name when clients reach it by another name
 * @param tokenUri              {@code token_uri} advertised in the demo service account; default
 *                              {@code http://127.0.0.1:<fcm port>/token}. Set it when the gateway
 *                              reaches the sandbox by another address (a container or Kubernetes service)
 * @param accessTokenTtl        lifetime of issued OAuth access tokens; shorten it to exercise refreshes
 * @param faults                initial fault injection, changeable at runtime with {@code PUT /sandbox/faults}
 */
@ConfigurationProperties("herald.sandbox")
public record SandboxProperties(
        @DefaultValue("9443") int apnsPort,
        Path apnsCertificatePath,
        Path apnsPrivateKeyPath,
        @DefaultValue({"localhost", "127.0.0.1", "::1"}) List<String> apnsCertificateNames,
        URI tokenUri,
        @DefaultValue("1h") Duration accessTokenTtl,
        @DefaultValue @NestedConfigurationProperty Faults faults) {

    public SandboxProperties {
        if (apnsCertificatePath == null) {
            apnsCertificatePath = Path.of(System.getProperty("java.io.tmpdir"), "herald-sandbox-apns.pem");
        }
        if (accessTokenTtl.isNegative() || accessTokenTtl.isZero()) {
            throw new IllegalArgumentException("herald.sandbox.access-token-ttl must be positive, was " + accessTokenTtl);
        }
    }
}
