package dev.herald.sandbox.control;

import dev.herald.sandbox.webpush.TestSubscriptions;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** Test subscriptions of the Web Push service, and what each received. */
@RestController
@RequestMapping("/sandbox/webpush")
class WebPushController {
    private final TestSubscriptions subscriptions;

    WebPushController(TestSubscriptions subscriptions) {
        this.subscriptions = subscriptions;
    }

    /**
     * Body (optional): {@code names} to issue (one random name if none), {@code applicationServerKey}
     * the app's VAPID public key to require. Answers the subscriptions as {@code PushSubscription.toJSON()}.
     */
    public record IssueRequest(List<String> names, String applicationServerKey) {
    }

    @PostMapping("/subscriptions")
    ResponseEntity<?> issue(@RequestBody(required = false) IssueRequest request) {
        List<String> names = request == null || request.names() == null ? List.of() : request.names();
        if (names.size() > 100_000) {
            throw new IllegalArgumentException("at most 100000 names a request");
        }
        return ResponseEntity.ok(subscriptions.issue(names, request == null ? null : request.applicationServerKey()));
    }

    @ExceptionHandler(IllegalArgumentException.class)
    ProblemDetail invalid(IllegalArgumentException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
        problem.setTitle("Invalid subscription request");
        return problem;
    }

    /** The last payload the subscription received, decrypted ({@code payload} null if none). */
    @GetMapping("/subscriptions/{name}")
    Map<String, Object> received(@PathVariable String name) {
        String payload = subscriptions.lastPayload(name);
        return payload == null ? Map.of("name", name) : Map.of("name", name, "payload", payload);
    }
}
