package dev.herald.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RedisLinkTests {

    @Test
    void aConnectionsFlushesGoThroughFlushConsolidationFirst() {
        EmbeddedChannel channel = new EmbeddedChannel(new ChannelOutboundHandlerAdapter());

        RedisLink.consolidateFlushes(channel);

        // First in the pipeline: it sees every flush, also those of handlers Lettuce adds (TLS).
        assertThat(channel.pipeline().first()).isInstanceOf(FlushConsolidationHandler.class);
        channel.finishAndReleaseAll();
    }

    @Test
    void commandsFromManyThreadsAllGetTheirAnswers() {
        // The held flushes are sent however the commands arrive: a burst from many threads completes.
        try (RedisLink link = RedisLink.connect(TestRedis.uri(), TestRedis.CLUSTER)) {
            List<CompletableFuture<String>> answers = IntStream.range(0, 2000).parallel()
                    .mapToObj(i -> link.async().echo("m" + i).toCompletableFuture()).toList();

            assertThat(TestRedis.join(CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)))).isNull();
            assertThat(answers.get(1999).join()).isEqualTo("m1999");
        }
    }
}
