package dev.herald.store.redis;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.herald.store.TestRedis;
import dev.herald.store.keys.RedisKeys;
import io.lettuce.core.FlushMode;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HeraldFunctionsTests {
    private static TestRedis redis;

    @BeforeAll
    static void connect() {
        redis = new TestRedis();
    }

    @AfterAll
    static void disconnect() {
        redis.close();
    }

    @BeforeEach
    void flush() {
        redis.flush();
    }

    @Test
    void runsAgainAfterRedisForgotTheLibrary() {
        HeraldFunctions functions = redis.functions();
        String app = RedisKeys.app("a");
        redis.sync().hset(app, "version", "0");
        assertThat(join(functions.<Long>call(HeraldFunctions.Function.APP_UPDATE, ScriptOutputType.INTEGER, new String[] {app},
                RedisKeys.APP_CHANGES_CHANNEL, "a", "0"))).isEqualTo(1L);

        // What a Redis restarted without persistence looks like: no functions.
        if (redis.async() instanceof RedisAdvancedClusterAsyncCommands<String, String> cluster) {
            join(CompletableFuture.allOf(cluster.masters().commands().functionFlush(FlushMode.SYNC).futures()));
        } else {
            redis.sync().functionFlush(FlushMode.SYNC);
        }

        assertThat(join(functions.<Long>call(HeraldFunctions.Function.APP_UPDATE, ScriptOutputType.INTEGER, new String[] {app},
                RedisKeys.APP_CHANGES_CHANNEL, "a", "0"))).isEqualTo(2L);
    }

    @Test
    void missingLibraryIsReportedByName() {
        assertThatThrownBy(() -> new HeraldFunctions(redis.async(), "/dev/herald/store/redis/nope.lua"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("nope.lua");
    }
}
