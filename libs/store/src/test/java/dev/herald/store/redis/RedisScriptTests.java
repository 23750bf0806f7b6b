package dev.herald.store.redis;

import static dev.herald.store.TestRedis.join;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.herald.store.TestRedis;
import io.lettuce.core.ScriptOutputType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RedisScriptTests {
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
    void runsAgainAfterRedisForgotTheScript() {
        RedisScript script = RedisScript.fromClasspath("/dev/herald/store/lua/app_update.lua", ScriptOutputType.INTEGER, redis.async());
        redis.sync().hset("app:a", "version", "0");
        assertThat(join(script.<Long>run(redis.async(), new String[] {"app:a"}, "a", "0"))).isEqualTo(1L);

        redis.sync().scriptFlush();

        assertThat(join(script.<Long>run(redis.async(), new String[] {"app:a"}, "a", "0"))).isEqualTo(2L);
    }

    @Test
    void missingScriptIsReportedByName() {
        assertThatThrownBy(() -> RedisScript.fromClasspath("/dev/herald/store/lua/nope.lua", ScriptOutputType.INTEGER, redis.async()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("nope.lua");
    }
}
