package dev.herald.store.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * A Lua script run by its SHA, so the hot path sends a 40-byte digest instead of the script;
 * reloaded transparently when Redis has forgotten it (restart, SCRIPT FLUSH).
 */
public final class RedisScript {
    private final String source;
    private final String sha;
    private final ScriptOutputType outputType;

    private RedisScript(String source, String sha, ScriptOutputType outputType) {
        this.source = source;
        this.sha = sha;
        this.outputType = outputType;
    }

    public static RedisScript fromClasspath(String resource, ScriptOutputType outputType, RedisAsyncCommands<String, String> redis) {
        try (InputStream in = RedisScript.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing script " + resource);
            }
            String source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return new RedisScript(source, redis.getStatefulConnection().sync().digest(source), outputType);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public <T> CompletableFuture<T> run(RedisAsyncCommands<String, String> redis, String[] keys, String... args) {
        CompletableFuture<T> result = new CompletableFuture<>();
        redis.<T>evalsha(sha, outputType, keys, args).whenComplete((value, error) -> {
            if (error instanceof RedisNoScriptException || (error != null && error.getCause() instanceof RedisNoScriptException)) {
                redis.<T>eval(source, outputType, keys, args).whenComplete((retried, again) -> {
                    if (again != null) {
                        result.completeExceptionally(again);
                    } else {
                        result.complete(retried);
                    }
                });
            } else if (error != null) {
                result.completeExceptionally(error);
            } else {
                result.complete(value);
            }
        });
        return result;
    }
}
