package dev.herald.cm.mqtt;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners' TLS: a Netty {@link SslContext} from {@code tls.crt} and {@code tls.key} in a mounted
 * Secret's directory, replaced when the files change (Kubernetes updates a mounted Secret in place,
 * cert-manager renews it before expiry). New connections take the context current at their accept;
 * open ones keep theirs. A change that does not load (a key written before its certificate, say)
 * keeps the current context and is tried again at the next check.
 */
final class ServerTls {
    private static final Logger log = LoggerFactory.getLogger(ServerTls.class);
    /** TLS 1.0 and 1.1 are refused (RFC 8996). */
    static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");
    /**
     * TLS 1.3's suites, and for 1.2 only ECDHE (forward secrecy) with AEAD (GCM, ChaCha20-Poly1305):
     * Mozilla's "intermediate" list without its finite-field DHE suites.
     */
    static final List<String> CIPHERS = List.of(
            "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

    private record Loaded(byte[] certificate, byte[] key, SslContext context) {
    }

    private final Path certificateFile;
    private final Path keyFile;
    private volatile Loaded loaded;

    /** Loads the files now: a listener without a usable certificate does not start. */
    ServerTls(Path directory) {
        this.certificateFile = directory.resolve("tls.crt");
        this.keyFile = directory.resolve("tls.key");
        try {
            this.loaded = load(Files.readAllBytes(certificateFile), Files.readAllBytes(keyFile));
        } catch (IOException e) {
            throw new IllegalStateException("cannot load the MQTT TLS certificate from " + directory + ": " + e, e);
        }
    }

    SslHandler newHandler(ByteBufAllocator allocator) {
        return loaded.context().newHandler(allocator);
    }

    /** Loads the files again if they changed; true if new connections now get a new certificate. */
    boolean reloadIfChanged() {
        try {
            byte[] certificate = Files.readAllBytes(certificateFile);
            byte[] key = Files.readAllBytes(keyFile);
            Loaded current = loaded;
            if (Arrays.equals(certificate, current.certificate()) && Arrays.equals(key, current.key())) {
                return false;
            }
            loaded = load(certificate, key);
            return true;
        } catch (IOException | RuntimeException e) {
            log.warn("MQTT TLS certificate changed but does not load, keeping the current one: {}", e.toString());
            return false;
        }
    }

    private Loaded load(byte[] certificate, byte[] key) throws SSLException {
        SslContext context = SslContextBuilder.forServer(new ByteArrayInputStream(certificate), new ByteArrayInputStream(key))
                .sslProvider(SslProvider.JDK)
                .protocols(PROTOCOLS)
                .ciphers(CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                .build();
        log.info("MQTT TLS certificate loaded from {}: {}", certificateFile, describe(certificate));
        return new Loaded(certificate, key, context);
    }

    private static String describe(byte[] certificate) {
        try {
            X509Certificate first = (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(certificate));
            return first.getSubjectX500Principal().getName() + ", valid until " + first.getNotAfter().toInstant();
        } catch (CertificateException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }
}
