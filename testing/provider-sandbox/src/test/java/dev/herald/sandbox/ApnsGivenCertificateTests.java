package dev.herald.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.eatthepath.pushy.apns.ApnsClient;
import com.eatthepath.pushy.apns.ApnsClientBuilder;
import com.eatthepath.pushy.apns.PushNotificationResponse;
import com.eatthepath.pushy.apns.auth.ApnsSigningKey;
import com.eatthepath.pushy.apns.util.SimpleApnsPushNotification;
import java.io.ByteArrayInputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The APNs port with a key and certificate made elsewhere, as charts/provider-sandbox gives them from
 * a TLS Secret that Helm generated: an RSA key in the PKCS#1 form ("RSA PRIVATE KEY") and its
 * self-signed certificate. Pushy trusting only that certificate delivers; the sandbox serves the same PEM.
 */
class ApnsGivenCertificateTests {

    @Test
    void servesTheGivenKeyAndCertificate(@TempDir Path folder) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair keys = generator.generateKeyPair();
        X500Name subject = new X500Name("CN=provider-sandbox");
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, BigInteger.ONE,
                Date.from(now.minus(1, ChronoUnit.HOURS)), Date.from(now.plus(1, ChronoUnit.DAYS)), subject, keys.getPublic());
        builder.addExtension(Extension.subjectAlternativeName, false,
                new GeneralNames(new GeneralName(GeneralName.iPAddress, "127.0.0.1")));
        byte[] certificate = builder.build(new JcaContentSignerBuilder("SHA256withRSA").build(keys.getPrivate()))
                .getEncoded();
        Path certificateFile = Files.writeString(folder.resolve("tls.crt"), Pem.encode("CERTIFICATE", certificate));
        byte[] pkcs1 = PrivateKeyInfo.getInstance(keys.getPrivate().getEncoded()).parsePrivateKey().toASN1Primitive()
                .getEncoded();
        Path keyFile = Files.writeString(folder.resolve("tls.key"), Pem.encode("RSA PRIVATE KEY", pkcs1));

        try (ProviderSandbox sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=0",
                "--herald.sandbox.apns-certificate-path=" + certificateFile,
                "--herald.sandbox.apns-private-key-path=" + keyFile)) {
            Map<String, Object> demo = sandbox.demoApns();
            ApnsClient apns = new ApnsClientBuilder()
                    .setApnsServer("127.0.0.1", sandbox.apnsPort())
                    .setTrustedServerCertificateChain(certificateFile.toFile())
                    .setSigningKey(ApnsSigningKey.loadFromInputStream(
                            new ByteArrayInputStream(((String) demo.get("p8")).getBytes(StandardCharsets.US_ASCII)),
                            (String) demo.get("teamId"), (String) demo.get("keyId")))
                    .build();
            try {
                String token = "device-" + UUID.randomUUID();
                PushNotificationResponse<SimpleApnsPushNotification> response = apns.sendNotification(
                        new SimpleApnsPushNotification(token, (String) demo.get("topic"), "{\"aps\":{}}"))
                        .get(20, TimeUnit.SECONDS);

                assertThat(response.isAccepted()).as("%s", response).isTrue();
                assertThat(sandbox.counts().received(token).apns()).isEqualTo(1);
            } finally {
                apns.close().get(10, TimeUnit.SECONDS);
            }
            assertThat(sandbox.apnsCertificate()).isEqualTo(certificateFile.toAbsolutePath());
            assertThat(Files.readString(certificateFile)).isEqualTo(Pem.encode("CERTIFICATE", certificate));
        }
    }
}
