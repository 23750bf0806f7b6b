package dev.herald.store.redis;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The store's one Lua library ({@code herald.lua}, {@code #!lua name=herald}), loaded with
 * FUNCTION LOAD REPLACE when the store starts (on every master of a cluster) and called with FCALL.
 * A Redis that lost its functions (restarted without persistence, FUNCTION FLUSH) answers
 * "Function not found": the library is loaded again and the call retried once.
 */
public final class HeraldFunctions {
    /** The functions of the library, named as they are registered there. */
    public enum Function {
        OUTCOME_RECORD, OUTCOME_RECORD_ALL, OUTCOME_SETTLE, OUTCOME_SETTLED, STATS_COUNT, STATS_ADD, EXPANSION_DONE, EXPANSION_ADVANCE, APP_UPDATE,
        DEVICE_REGISTER, DEVICE_REMOVE, DEVICE_TOPIC, DEVICE_READ, BOX_PUT, BOX_REMOVE, BOX_READ, BOX_EARLIEST,
        DELETE_IF_EQUAL, REPLACE_IF_EQUAL,
        MESSAGE_CANCEL, MESSAGE_RELEASE, OUTCOME_CANCEL, DEVICE_REMOVE_STALE,
        BUCKET_TAKE, BUCKET_PAUSE,
        SCHEDULE_CLAIM, SCHEDULE_FIRED, DEVICE_ZONE, DEVICE_IMPORT,
        SESSION_CLAIM, CREDENTIALS_REVOKE, APP_RESEAL;

        String registeredName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private static final String RESOURCE = "/dev/herald/store/redis/herald.lua";

    private final RedisClusterAsyncCommands<String, String> redis;
    private final String source;

    /** Loads the library now, so a Redis that refuses it (older than 7) stops the start. */
    public HeraldFunctions(RedisClusterAsyncCommands<String, String> redis) {
        this(redis, RESOURCE);
    }

    HeraldFunctions(RedisClusterAsyncCommands<String, String> redis, String resource) {
        this.redis = redis;
        this.source = read(resource);
        try {
            load().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot load the herald function library: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (TimeoutException e) {
            throw new IllegalStateException("loading the herald function library timed out", e);
        }
    }

    /** Calls a function; every key must be in one hash slot (see RedisKeys). */
    public <T> CompletableFuture<T> call(Function function, ScriptOutputType type, String[] keys, String... args) {
        return this.<T>fcall(function, type, keys, args).handle((value, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(value);
            }
            if (!functionMissing(error)) {
                return CompletableFuture.<T>failedFuture(unwrap(error));
            }
            return load().thenCompose(loaded -> this.<T>fcall(function, type, keys, args));
        }).thenCompose(result -> result);
    }

    /** Calls a function that answers yes (1) or no (0). */
    public CompletableFuture<Boolean> ask(Function function, String[] keys, String... args) {
        return this.<Long>call(function, ScriptOutputType.INTEGER, keys, args).thenApply(answer -> answer == 1);
    }

    private <T> CompletableFuture<T> fcall(Function function, ScriptOutputType type, String[] keys, String[] args) {
        return redis.<T>fcall(function.registeredName(), type, keys, args).toCompletableFuture();
    }

    /** FUNCTION LOAD REPLACE, on every master when clustered (functions are per node). */
    CompletableFuture<Void> load() {
        if (redis instanceof RedisAdvancedClusterAsyncCommands<String, String> cluster) {
            return CompletableFuture.allOf(cluster.masters().commands().functionLoad(source, true).futures());
        }
        return redis.functionLoad(source, true).toCompletableFuture().thenApply(name -> null);
    }

    private static boolean functionMissing(Throwable error) {
        Throwable cause = unwrap(error);
        return cause instanceof RedisCommandExecutionException && cause.getMessage() != null
                && cause.getMessage().contains("Function not found");
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    private static String read(String resource) {
        try (InputStream in = HeraldFunctions.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing " + resource);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
