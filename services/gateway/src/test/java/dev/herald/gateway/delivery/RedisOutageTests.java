package dev.herald.gateway.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

class RedisOutageTests {

    @Test
    void redisUnavailableFullOrLoadingIsWaitedOutAScriptErrorIsNot() {
        assertThat(RedisOutage.passes(new RedisCommandExecutionException("OOM command not allowed when used memory > 'maxmemory'."))).isTrue();
        assertThat(RedisOutage.passes(new RedisCommandExecutionException("LOADING Redis is loading the dataset in memory"))).isTrue();
        assertThat(RedisOutage.passes(new RedisException("Currently not connected. Commands are rejected."))).isTrue();
        assertThat(RedisOutage.passes(new RedisConnectionException("Connection refused"))).isTrue();
        assertThat(RedisOutage.passes(new RedisCommandTimeoutException("Command timed out after 5 second(s)"))).isTrue();
        assertThat(RedisOutage.passes(new RedisCommandExecutionException("ERR user_script:12: attempt to compare nil"))).isFalse();
        assertThat(RedisOutage.passes(new IllegalStateException("a bug"))).isFalse();
    }

    @Test
    void aWriteRefusedWhileRedisIsFullIsRecordedOnceItHasRoomAgain() {
        AtomicInteger tries = new AtomicInteger();
        Boolean recorded = RedisOutage.<Boolean>rideOut(() -> tries.incrementAndGet() < 4
                        ? CompletableFuture.failedFuture(new RedisCommandExecutionException("OOM command not allowed"))
                        : CompletableFuture.completedFuture(true))
                .block(Duration.ofSeconds(10));
        assertThat(recorded).isTrue();
        assertThat(tries).hasValue(4);
    }

    @Test
    void aScriptErrorIsNotCalledAgain() {
        AtomicInteger tries = new AtomicInteger();
        Mono<Boolean> call = RedisOutage.rideOut(() -> {
            tries.incrementAndGet();
            return CompletableFuture.failedFuture(new RedisCommandExecutionException("ERR user_script:1: a bug"));
        });
        assertThatThrownBy(() -> call.block(Duration.ofSeconds(10))).isInstanceOf(RedisCommandExecutionException.class);
        assertThat(tries).hasValue(1);
    }
}
