package dev.herald.dispatcher.send;

import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.problem.Problems;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.net.URI;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /v1/apps/{appId}/messages}: 202 once the message is safely on the queue. */
@AppApi
@RestController
public class SendController {
    static final String IDEMPOTENCY_KEY = "Idempotency-Key";
    static final String REPLAYED = "Idempotent-Replayed";
    private static final Pattern KEY = Pattern.compile("[\\x20-\\x7E]{1,255}");

    /** The 202 body: {@code queued}, or {@code scheduled} with its due times (one per zone group). */
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record AcceptedMessage(String id, String state, List<Instant> dueAt) {
    }

    private final SendService sends;

    public SendController(SendService sends) {
        this.sends = sends;
    }

    @PostMapping("/v1/apps/{appId}/messages")
    ResponseEntity<AcceptedMessage> send(AuthenticatedApp app,
                                         @RequestHeader(name = IDEMPOTENCY_KEY, required = false) String idempotencyKey,
                                         @RequestBody SendRequest request) {
        if (idempotencyKey != null && (!KEY.matcher(idempotencyKey).matches() || idempotencyKey.isBlank())) {
            throw Problems.invalidField(IDEMPOTENCY_KEY, "must be 1 to 255 printable ASCII characters");
        }
        SendService.Accepted accepted = sends.send(app.id(), request, Optional.ofNullable(idempotencyKey));
        ResponseEntity.BodyBuilder response = ResponseEntity
                .accepted()
                .location(URI.create("/v1/apps/" + app.id() + "/messages/" + accepted.id()));
        if (accepted.replayed()) {
            response.header(REPLAYED, "true");
        }
        return response.body(new AcceptedMessage(accepted.id(), accepted.dueAt().isEmpty() ? "queued" : "scheduled",
                accepted.dueAt()));
    }
}
