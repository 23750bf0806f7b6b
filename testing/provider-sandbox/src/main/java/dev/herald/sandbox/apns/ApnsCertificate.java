package dev.herald.sandbox.apns;

import dev.herald.sandbox.Pem;
import dev.herald.sandbox.SandboxProperties;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The APNs port's TLS identity: an EC P-256 key and a self-signed certificate made at startup for
 * {@code herald.sandbox.apns-certificate-names}, written as PEM to
 * {@code herald.sandbox.apns-certificate-path} for clients to trust (Pushy's
 * {@code setTrustedServerCertificateChain}). Nothing secret is written: only the certificate.
 * With {@code herald.sandbox.apns-private-key-path} the key and certificate are read instead: in
 * Kubernetes a Secret holds them, so the gateway can trust the certificate before the sandbox starts
 * and it stays the same when the sandbox's pod is replaced.
 */
@Component
public class ApnsCertificate {
    private static final Logger log = LoggerFactory.getLogger(ApnsCertificate.class);

    private final PrivateKey privateKey;
    private final X509Certificate certificate;
    private final String pem;
    private final Path path;

    public ApnsCertificate(SandboxProperties properties) {
        this.path = properties.apnsCertificatePath().toAbsolutePath();
        if (properties.apnsPrivateKeyPath() != null) {
            Path keyPath = properties.apnsPrivateKeyPath().toAbsolutePath();
            try {
                this.privateKey = readPrivateKey(keyPath);
                this.pem = Files.readString(path);
                this.certificate = readCertificate(pem);
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException("cannot read the APNs sandbox key " + keyPath + " and certificate " + path, e);
            }
            log.info("APNs sandbox certificate for {} read from {}", certificate.getSubjectX500Principal(), path);
            return;
        }
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            KeyPair keys = generator.generateKeyPair();
            this.privateKey = keys.getPrivate();
            this.certificate = selfSigned(keys, properties.apnsCertificateNames());
            this.pem = Pem.encode("CERTIFICATE", certificate.getEncoded());
        } catch (GeneralSecurityException | OperatorCreationException | IOException e) {
            throw new IllegalStateException("cannot create the APNs sandbox certificate", e);
        }
        write(path, pem);
        log.info("APNs sandbox certificate for {} written to {}", properties.apnsCertificateNames(), path);
    }

    public PrivateKey privateKey() {
        return privateKey;
    }

    public X509Certificate certificate() {
        return certificate;
    }

    /** The certificate as PEM, as written to {@link #path()}. */
    public String pem() {
        return pem;
    }

    public Path path() {
        return path;
    }

    private static X509Certificate selfSigned(KeyPair keys, List<String> names)
            throws IOException, OperatorCreationException, GeneralSecurityException {
        X500Name subject = new X500Name("CN=" + names.getFirst() + ", O=Herald provider sandbox");
        Instant now = Instant.now();
        X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject,
                new BigInteger(64, new SecureRandom()),
                Date.from(now.minus(Duration.ofHours(1))), // tolerate clients whose clock is a little behind
                Date.from(now.plus(Duration.ofDays(3650))),
                subject, keys.getPublic());
        builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.stream()
                .map(ApnsCertificate::generalName).toArray(GeneralName[]::new)));
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
        builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
        return new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
    }

    /** PKCS#8 ("PRIVATE KEY") or the algorithm's own form ("RSA PRIVATE KEY", "EC PRIVATE KEY"). */
    private static PrivateKey readPrivateKey(Path file) throws IOException {
        try (PEMParser parser = new PEMParser(Files.newBufferedReader(file))) {
            JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
            return switch (parser.readObject()) {
                case PEMKeyPair pair -> converter.getKeyPair(pair).getPrivate();
                case PrivateKeyInfo info -> converter.getPrivateKey(info);
                case null, default -> throw new IOException("no unencrypted private key in " + file);
            };
        }
    }

    private static X509Certificate readCertificate(String pem) throws IOException, GeneralSecurityException {
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            if (parser.readObject() instanceof X509CertificateHolder holder) {
                return new JcaX509CertificateConverter().getCertificate(holder);
            }
            throw new IOException("no certificate in the PEM");
        }
    }

    /** Hostname verification needs IP addresses as iPAddress entries, not DNS names. */
    private static GeneralName generalName(String name) {
        boolean ip = name.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == '.' || c == ':')
                && (name.contains(".") || name.contains(":"));
        if (ip) {
            try {
                InetAddress.ofLiteral(name);
                return new GeneralName(GeneralName.iPAddress, name);
            } catch (IllegalArgumentException notAnAddress) {
                // fall through: a DNS name made of hex digits and dots
            }
        }
        return new GeneralName(GeneralName.dNSName, name);
    }

    /** Written beside and moved into place, so a client never reads half a certificate. */
    private static void write(Path path, String pem) {
        try {
            Path parent = path.getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Path temp = Files.createTempFile(parent != null ? parent : Path.of("."), path.getFileName().toString(), ".tmp");
            Files.writeString(temp, pem);
            Files.move(temp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the APNs sandbox certificate to " + path, e);
        }
    }
}
