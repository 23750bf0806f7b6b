package dev.herald.cm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * Certificates for the connection manager's TLS listeners, made with Debian's openssl as an operator
 * (or cert-manager with a CA issuer) would: a test CA, and server certificates for 127.0.0.1 signed
 * by it, written into a directory laid out as a mounted {@code kubernetes.io/tls} Secret
 * ({@code tls.crt}, {@code tls.key}, {@code ca.crt}). Clients trust the CA, so a renewed server
 * certificate is trusted as the first one was.
 */
final class TestTls {
    final Path work;
    /** What the connection manager reads (herald.cm.mqtt.tls.certificate-dir). */
    final Path secret;
    final Path caCertificate;
    private int issued;

    private TestTls(Path work) {
        this.work = work;
        this.secret = work.resolve("secret");
        this.caCertificate = work.resolve("ca.crt");
    }

    /** A CA and a first server certificate (EC P-256, PKCS#8 key) in the secret directory. */
    static TestTls create() {
        try {
            TestTls tls = new TestTls(Files.createTempDirectory("herald-cm-tls"));
            Runtime.getRuntime().addShutdownHook(new Thread(tls::delete));
            Files.createDirectories(tls.secret);
            tls.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=herald-test-ca");
            Files.writeString(tls.work.resolve("san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
            tls.install(tls.issue("cm-first", false));
            return tls;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Issues a new server certificate (RSA with a PKCS#1 key, cert-manager's default encoding) and
     * puts it in place as Kubernetes updates a mounted Secret: the files are swapped whole. Returns
     * its subject's CN.
     */
    String renew() {
        String name = "cm-renewed-" + (issued + 1);
        install(issue(name, true));
        return name;
    }

    /** Issues a certificate for 127.0.0.1; returns its base name in the work directory. */
    private String issue(String commonName, boolean pkcs1Rsa) {
        String name = "server-" + (++issued);
        if (pkcs1Rsa) {
            openssl("genrsa", "-traditional", "-out", name + ".key", "2048");
        } else {
            openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name + ".key");
        }
        openssl("req", "-new", "-key", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + commonName);
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", "san.cnf", "-out", name + ".crt");
        return name;
    }

    private void install(String name) {
        try {
            for (String[] file : new String[][] {{name + ".crt", "tls.crt"}, {name + ".key", "tls.key"}, {"ca.crt", "ca.crt"}}) {
                Path staged = secret.resolve("." + file[1] + ".new");
                Files.copy(work.resolve(file[0]), staged, StandardCopyOption.REPLACE_EXISTING);
                Files.move(staged, secret.resolve(file[1]), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void delete() {
        try (var files = Files.walk(work)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: left for the system to clear
        }
    }

    /** Key material in PEM as a client would see it, for assertions on the key format. */
    String keyPem() {
        try {
            return Files.readString(secret.resolve("tls.key"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    TrustManagerFactory trustManagers() {
        try (InputStream in = Files.newInputStream(caCertificate)) {
            KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
            trusted.load(null, null);
            trusted.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(trusted);
            return factory;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The subject of the certificate a new TLS connection to the port is served (checked against the CA). */
    String servedSubject(int port) {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trustManagers().getTrustManagers(), null);
            try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port)) {
                socket.setSoTimeout(5000);
                socket.startHandshake();
                return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSubjectX500Principal().getName();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** What a command printed (stdout and stderr) and its exit code. */
    record Run(int exit, String output) {
    }

    static Run run(Path directory, List<String> command) {
        try {
            Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
            byte[] output = process.getInputStream().readAllBytes();
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as(String.join(" ", command)).isTrue();
            return new Run(process.exitValue(), new String(output, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A Debian command-line tool the tests run (openssl, mosquitto-clients). */
    static String executable(String name) {
        java.io.File file = new java.io.File("/usr/bin/" + name);
        assertThat(file.canExecute()).as(name + " (scripts/install-deps.sh installs it)").isTrue();
        return file.getPath();
    }

    private void openssl(String... arguments) {
        List<String> command = new ArrayList<>(List.of(executable("openssl")));
        command.addAll(List.of(arguments));
        Run run = run(work, command);
        assertThat(run.exit()).as(String.join(" ", command) + ": " + run.output()).isZero();
    }
}
