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
import org.junit.jupiter.api.Test;

class HeraldFunctionsTests {

    @Test
    void runsAgainAfterRedisForgotTheLibrary() {
        try (TestRedis redis = new TestRedis()) {
            forgetAndCallAgain(redis);
        }
    }

    private static void forgetAndCallAgain(TestRedis redis) {
        redis.flush();
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
        try (TestRedis redis = new TestRedis()) {
            assertThatThrownBy(() -> new HeraldFunctions(redis.async(), "/dev/herald/store/redis/nope.lua"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("nope.lua");
        }
    }
}
