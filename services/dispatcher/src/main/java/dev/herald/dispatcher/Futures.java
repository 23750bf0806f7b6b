package dev.herald.dispatcher;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Waits for the registry's futures. Requests run on virtual threads, so blocking here costs no
 * platform thread; the cause of a failure is rethrown as it is (a {@code RedisException} becomes a
 * 503 in {@link dev.herald.dispatcher.problem.ProblemHandler}).
 */
public final class Futures {
    private Futures() {
    }

    public static <T> T await(CompletionStage<T> stage) {
        CompletableFuture<T> future = stage.toCompletableFuture();
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw e;
        }
    }
}
