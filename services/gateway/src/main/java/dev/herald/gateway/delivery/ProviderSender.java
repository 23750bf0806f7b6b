package dev.herald.gateway.delivery;

import dev.herald.contract.Channel;
import dev.herald.contract.PushBatch;
import dev.herald.contract.Target;
import dev.herald.store.app.App;
import reactor.core.publisher.Mono;

/** Delivers one message to one target through one provider, without blocking the caller. */
public interface ProviderSender {

    Channel channel();

    /**
     * Sends once (retries are the caller's). Completes with the provider's answer, or with an
     * error when there was no answer (connection refused, reset, timeout).
     */
    Mono<ProviderResponse> send(App app, PushBatch message, Target target);
}
