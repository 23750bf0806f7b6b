package dev.herald.dispatcher.status;

import static dev.herald.dispatcher.Futures.await;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.status.AppStats;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET .../messages/{id}} and {@code GET .../stats}. */
@AppApi
@RestController
public class StatusController {

    /**
     * A message's status.
     *
     * @param targets    counts; {@code total} grows while a topic or device audience is expanded
     *                   ({@code targets.expanded} false) and is final afterwards
     * @param cancelledAt when the message was cancelled (absent if it was not)
     * @param dueAt      due times of a scheduled send not yet fired (absent when none)
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record MessageView(String id, String state, Targets targets, Map<String, Long> failures, long tokensRemoved,
                              Instant acceptedAt, Instant queuedAt, Instant completedAt, Instant cancelledAt,
                              List<Instant> dueAt) {
        public static MessageView of(MessageStatus status) {
            return new MessageView(status.id(), status.state(),
                    new Targets(status.total(), status.sent(), status.delivered(), status.failed(), status.expired(), status.pending(),
                            status.expanded(), status.cancelled()),
                    status.failures(), status.tokensRemoved(), status.acceptedAt(), status.queuedAt(), status.completedAt(),
                    status.cancelledAt(), status.dueAt().isEmpty() ? null : status.dueAt());
        }
    }

    public record Targets(long total, long sent, long delivered, long failed, long expired, long pending, boolean expanded,
                          long cancelled) {
    }

    /**
     * An app's totals; {@code failed} maps each failure reason to its count.
     *
     * @param staleTokensSkipped audience members left out of fan-outs because their token was stale
     * @param staleTokensRemoved devices the token sweep removed
     */
    public record StatsView(long sent, Map<String, Long> failed, long expired, long tokensRemoved, long cancelled,
                            long staleTokensSkipped, long staleTokensRemoved) {
        static StatsView of(AppStats stats) {
            return new StatsView(stats.sent(), stats.failures(), stats.expired(), stats.tokensRemoved(), stats.cancelled(),
                    stats.staleTokensSkipped(), stats.staleTokensRemoved());
        }
    }

    private final MessageStatusStore status;

    public StatusController(MessageStatusStore status) {
        this.status = status;
    }

    @GetMapping("/v1/apps/{appId}/messages/{messageId}")
    MessageView message(AuthenticatedApp app, @PathVariable String messageId) {
        // Anything not shaped like our ids cannot exist: no Redis look-up for it.
        MessageStatus found = Ids.isMessageId(messageId)
                ? await(status.find(messageId)).filter(s -> app.id().equals(s.appId())).orElse(null)
                : null;
        if (found == null) {
            throw noMessage(messageId);
        }
        return MessageView.of(found);
    }

    /** The 404 for a message id this app has no message under. */
    public static RuntimeException noMessage(String messageId) {
        return Problems.notFound("no message " + (Ids.isMessageId(messageId) ? messageId + " " : "") + "in this app");
    }

    @GetMapping("/v1/apps/{appId}/stats")
    StatsView stats(AuthenticatedApp app) {
        return StatsView.of(await(status.stats(app.id())));
    }
}
