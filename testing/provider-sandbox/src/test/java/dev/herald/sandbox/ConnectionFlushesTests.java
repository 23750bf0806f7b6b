package dev.herald.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.ConnectionProvider;

class ConnectionFlushesTests {
    private static final int ANSWERS = 500;

    private final Queue<Channel> streams = new ConcurrentLinkedQueue<>();
    private DisposableServer server;

    /** Answers as the sandbox does: after a delay on the connection's own loop, outside any read. */
    @BeforeEach
    void start() {
        server = ConnectionFlushes.consolidated(HttpServer.create().port(0).protocol(HttpProtocol.H2C))
                .handle((request, response) -> {
                    request.withConnection(connection -> streams.add(connection.channel()));
                    String answer = request.uri().substring(1);
                    return response.sendString(Mono.create(sink -> EventLoops.of(request)
                            .schedule(() -> sink.success(answer), 20, TimeUnit.MILLISECONDS)));
                })
                .bindNow();
    }

    @AfterEach
    void stop() {
        server.disposeNow(Duration.ofSeconds(5));
    }

    @Test
    void delayedAnswersOnOneConnectionAllArriveWhole() {
        HttpClient client = HttpClient.create(ConnectionProvider.create("one-connection", 1))
                .protocol(HttpProtocol.H2C).port(server.port());

        List<String> answers = Flux.range(0, ANSWERS)
                .flatMap(i -> client.get().uri("/answer-" + i).responseContent().aggregate().asString()
                        .map(body -> body.equals("answer-" + i) ? "ok" : "wrong: " + body), ANSWERS)
                .collectList().block(Duration.ofSeconds(30));

        assertThat(answers).hasSize(ANSWERS).containsOnly("ok");
    }

    @Test
    void theConnectionHoldsFlushesFirstInItsPipelineAndItsStreamsDoNot() {
        HttpClient.create().protocol(HttpProtocol.H2C).port(server.port())
                .get().uri("/one").responseContent().aggregate().asString().block(Duration.ofSeconds(10));

        Channel stream = streams.peek();
        assertThat(stream).isNotNull();
        assertThat(stream.parent().pipeline().first()).isInstanceOf(FlushConsolidationHandler.class);
        assertThat(stream.pipeline().get(FlushConsolidationHandler.class)).isNull();
    }
}
