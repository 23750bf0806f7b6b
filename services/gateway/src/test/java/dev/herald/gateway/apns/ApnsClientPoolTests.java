package dev.herald.gateway.apns;

import static org.assertj.core.api.Assertions.assertThat;

import com.eatthepath.pushy.apns.ApnsClient;
import dev.herald.gateway.GatewayProperties;
import dev.herald.store.app.ApnsCredential;
import dev.herald.store.app.App;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.nio.NioEventLoopGroup;
import java.net.URI;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ApnsClientPoolTests {
    @SuppressWarnings("deprecation")
    private final NioEventLoopGroup eventLoops = new NioEventLoopGroup(1);
    private final ApnsClientPool pool = new ApnsClientPool(new GatewayProperties.Apns(
            URI.create("https://127.0.0.1:1"), URI.create("https://127.0.0.1:1"), null, 1), eventLoops,
            ApnsClientMetrics.listener(new SimpleMeterRegistry()));

    @AfterEach
    void close() {
        pool.close();
        eventLoops.shutdownGracefully();
    }

    private static ApnsCredential credential() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        String pem = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(generator.generateKeyPair().getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
        return new ApnsCredential(pem, "KEYID12345", "TEAMID1234", "dev.herald.test", "sandbox");
    }

    private static App app(long version, ApnsCredential credential) {
        return new App("shop", "Shop", Instant.EPOCH, version, List.of(), Optional.empty(), Optional.of(credential));
    }

    @Test
    void keepsOneClientPerCredentialAndRebuildsItWhenTheAppChanges() throws Exception {
        ApnsCredential first = credential();
        ApnsClient client = pool.client(app(1, first), first);
        assertThat(pool.client(app(1, first), first)).isSameAs(client);

        ApnsCredential second = credential();
        ApnsClient rebuilt = pool.client(app(2, second), second);
        assertThat(rebuilt).isNotSameAs(client);
        assertThat(pool.client(app(2, second), second)).isSameAs(rebuilt);
    }
}
