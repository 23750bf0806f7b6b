package dev.herald.gateway.fcm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.herald.contract.Channel;
import dev.herald.contract.Notification;
import dev.herald.contract.Priority;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.gateway.GatewayProperties;
import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.sandbox.ProviderSandbox;
import dev.herald.sandbox.faults.FaultsUpdate;
import dev.herald.store.app.App;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.app.FcmTokenHosts;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/** The FCM client against the provider sandbox's FCM (h2c) and its TLS port, and against servers that misbehave. */
class FcmSenderTests {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static ProviderSandbox sandbox;
    @SuppressWarnings("deprecation")
    private final EventLoopGroup eventLoops = new NioEventLoopGroup(2);
    private FcmSender sender;

    @BeforeAll
    static void startSandbox() {
        sandbox = ProviderSandbox.start("--herald.sandbox.faults.latency-ms=20");
    }

    @AfterAll
    static void stopSandbox() {
        sandbox.close();
    }

    @AfterEach
    void close() {
        if (sender != null) {
            sender.close();
        }
        sandbox.faults().restore();
        eventLoops.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
    }

    private FcmSender sender(URI endpoint, int connections, Duration timeout) {
        GatewayProperties.Fcm config = new GatewayProperties.Fcm(endpoint, connections, timeout);
        sender = new FcmSender(config, tokens(), JSON, Clock.systemUTC(), eventLoops);
        return sender;
    }

    private static FcmAccessTokens tokens() {
        return new FcmAccessTokens(Clock.systemUTC(), FcmTokenHosts.of(List.of("127.0.0.1")));
    }

    private static App app() {
        Map<String, Object> account = sandbox.demoServiceAccount();
        FcmCredential credential = new FcmCredential(JSON.writeValueAsString(account), (String) account.get("project_id"),
                (String) account.get("client_email"));
        return new App("app-" + UUID.randomUUID(), "Test", Instant.EPOCH, 1, List.of(), Optional.of(credential), Optional.empty());
    }

    private static PushBatch message(List<Target> targets) {
        return new PushBatch(UUID.randomUUID().toString(), "app", 0, Priority.normal,
                new Notification("Hello", "World", Map.of(), Map.of()), null, Instant.now(),
                Instant.now().plusSeconds(600), targets);
    }

    private static Target fcm(String token) {
        return new Target(Channel.fcm, token, null);
    }

    @Test
    void moreRequestsAtOnceThanTheServerAllowsOnOneConnectionWaitAndAreEachSentOnce() {
        FcmSender fcm = sender(sandbox.fcmEndpoint(), 1, Duration.ofSeconds(10));
        App app = app();
        List<String> tokens = IntStream.range(0, 450).mapToObj(i -> "many-" + i + "-" + UUID.randomUUID()).toList();
        PushBatch message = message(tokens.stream().map(FcmSenderTests::fcm).toList());

        List<ProviderResponse> answers = Flux.fromIterable(tokens)
                .flatMap(token -> fcm.send(app, message, fcm(token)), tokens.size())
                .collectList().block(Duration.ofSeconds(60));

        assertThat(answers).hasSize(tokens.size()).allMatch(ProviderResponse.ACCEPTED::equals);
        assertThat(tokens).allSatisfy(token -> assertThat(sandbox.counts().received(token).attempts()).isEqualTo(1));
    }

    @Test
    void providerRejectionsAreValuesWithTheirReasonAndRetryAfter() {
        FcmSender fcm = sender(sandbox.fcmEndpoint(), 2, Duration.ofSeconds(10));
        App app = app();
        String dead = "unregistered-" + UUID.randomUUID();
        String throttled = "throttled3-" + UUID.randomUUID();
        PushBatch message = message(List.of(fcm(dead), fcm(throttled)));

        ProviderResponse deadAnswer = fcm.send(app, message, fcm(dead)).block(Duration.ofSeconds(10));
        ProviderResponse throttledAnswer = fcm.send(app, message, fcm(throttled)).block(Duration.ofSeconds(10));

        assertThat(deadAnswer).isInstanceOfSatisfying(ProviderResponse.Rejected.class, rejected -> {
            assertThat(rejected.reason()).isEqualTo("UNREGISTERED");
            assertThat(rejected.disposition()).isEqualTo(ProviderResponse.Disposition.TOKEN_INVALID);
        });
        assertThat(throttledAnswer).isInstanceOfSatisfying(ProviderResponse.Rejected.class, rejected -> {
            assertThat(rejected.disposition()).isEqualTo(ProviderResponse.Disposition.THROTTLED);
            assertThat(rejected.retryAfter()).isPositive();
        });
    }

    @Test
    void aRequestNotAnsweredInTimeIsATransportFailureAndTheConnectionServesTheNext() {
        FcmSender fcm = sender(sandbox.fcmEndpoint(), 1, Duration.ofMillis(300));
        App app = app();
        String token = "slow-" + UUID.randomUUID();
        PushBatch message = message(List.of(fcm(token)));
        sandbox.faults().update(new FaultsUpdate(2_000L, null, null, null, null));

        assertThatThrownBy(() -> fcm.send(app, message, fcm(token)).block(Duration.ofSeconds(10)))
                .hasCauseInstanceOf(FcmTransportException.class).hasMessageContaining("no answer from FCM within");

        sandbox.faults().restore();
        String next = "after-timeout-" + UUID.randomUUID();
        assertThat(fcm.send(app, message, fcm(next)).block(Duration.ofSeconds(10))).isEqualTo(ProviderResponse.ACCEPTED);
    }

    @Test
    void anEndpointThatRefusesConnectionsFailsTheRequestInsteadOfHoldingIt() throws IOException {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        FcmSender fcm = sender(URI.create("http://127.0.0.1:" + port), 2, Duration.ofSeconds(5));
        App app = app();
        // The access token comes from the sandbox; only the FCM endpoint is unreachable.
        assertThatThrownBy(() -> fcm.send(app, message(List.of(fcm("t"))), fcm("t")).block(Duration.ofSeconds(10)))
                .hasCauseInstanceOf(FcmTransportException.class).hasMessageContaining("cannot connect to FCM");
    }

    @Test
    void aServerThatClosesWithoutSpeakingHttp2FailsTheRequest() throws Exception {
        try (ServerSocket server = new ServerSocket(0)) {
            Thread.ofVirtual().start(() -> {
                while (!server.isClosed()) {
                    try (Socket socket = server.accept(); InputStream in = socket.getInputStream()) {
                        in.read(new byte[64]); // the client's preface arrives, then the connection is closed
                    } catch (IOException closed) {
                        return;
                    }
                }
            });
            FcmSender fcm = sender(URI.create("http://127.0.0.1:" + server.getLocalPort()), 1, Duration.ofSeconds(5));
            App app = app();
            assertThatThrownBy(() -> fcm.send(app, message(List.of(fcm("t"))), fcm("t")).block(Duration.ofSeconds(10)))
                    .hasCauseInstanceOf(FcmTransportException.class);
        }
    }

    @Test
    void speaksHttp2OverTlsNegotiatedWithAlpn() throws Exception {
        // The sandbox's APNs port is HTTP/2 over TLS: it answers an FCM path with an APNs error, which
        // is an answer (a value), where a TLS or ALPN failure would be a transport failure.
        SslContext tls = SslContextBuilder.forClient()
                .trustManager(sandbox.apnsCertificate().toFile())
                .ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE)
                .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                        ApplicationProtocolNames.HTTP_2))
                .build();
        URI endpoint = sandbox.apnsEndpoint();
        GatewayProperties.Fcm config = new GatewayProperties.Fcm(endpoint, 1, Duration.ofSeconds(5));
        sender = new FcmSender(new FcmConnectionPool(endpoint, 1, Duration.ofSeconds(5), eventLoops, tls), config, tokens(),
                JSON, Clock.systemUTC());

        ProviderResponse answer = Mono.defer(() -> sender.send(app(), message(List.of(fcm("t"))), fcm("t")))
                .block(Duration.ofSeconds(10));

        assertThat(answer).isInstanceOf(ProviderResponse.Rejected.class);
    }
}
