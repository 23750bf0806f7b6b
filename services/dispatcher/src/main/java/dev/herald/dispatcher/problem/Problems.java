package dev.herald.dispatcher.problem;

import java.net.URI;
import java.util.List;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * The problems the API answers with. Each has a stable {@code type} ({@value #TYPE_PREFIX}slug),
 * a short {@code title} per type and a {@code detail} for this occurrence; validation problems add
 * {@code errors}: a list of {@code {"field","message"}}.
 */
public final class Problems {
    public static final String TYPE_PREFIX = "urn:herald:problem:";

    private Problems() {
    }

    /** One invalid input: where it is (a JSON path such as {@code to.tokens[0].token}, or a path or header name) and what is wrong. */
    public record FieldError(String field, String message) {
    }

    public static ProblemDetail problem(HttpStatus status, String slug, String title, String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setType(URI.create(TYPE_PREFIX + slug));
        problem.setTitle(title);
        return problem;
    }

    /**
     * Gives a problem made elsewhere (Spring MVC's own, the servlet container's) a type of ours:
     * the slug of its status' reason phrase ({@code urn:herald:problem:unsupported-media-type}),
     * and that phrase as title if it has none.
     */
    public static ProblemDetail typed(ProblemDetail problem) {
        HttpStatus status = HttpStatus.resolve(problem.getStatus());
        String reason = status != null ? status.getReasonPhrase() : "Error";
        if (problem.getType() == null || "about:blank".equals(problem.getType().toString())) {
            problem.setType(URI.create(TYPE_PREFIX + reason.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9]+", "-")));
        }
        if (problem.getTitle() == null) {
            problem.setTitle(reason);
        }
        return problem;
    }

    /** A request whose line, path, headers or query string could not be parsed. */
    public static ProblemDetail malformedRequest(String detail) {
        return problem(HttpStatus.BAD_REQUEST, "malformed-request", "Malformed request", detail);
    }

    public static ErrorResponseException exception(ProblemDetail problem) {
        return new ErrorResponseException(HttpStatus.valueOf(problem.getStatus()), problem, null);
    }

    public static ErrorResponseException invalid(List<FieldError> errors) {
        ProblemDetail problem = problem(HttpStatus.BAD_REQUEST, "invalid-request", "Invalid request",
                String.join("; ", errors.stream().map(e -> e.field() + ": " + e.message()).toList()));
        problem.setProperty("errors", errors);
        return exception(problem);
    }

    public static ErrorResponseException invalidField(String field, String message) {
        return invalid(List.of(new FieldError(field, message)));
    }

    public static ProblemDetail malformedJson(String detail) {
        return problem(HttpStatus.BAD_REQUEST, "malformed-json", "Malformed JSON", detail);
    }

    public static ErrorResponseException tooLarge(String detail) {
        return exception(problem(HttpStatus.CONTENT_TOO_LARGE, "too-large", "Content too large", detail));
    }

    public static ErrorResponseException notFound(String detail) {
        return exception(problem(HttpStatus.NOT_FOUND, "not-found", "Not found", detail));
    }

    public static ErrorResponseException conflict(String detail) {
        return exception(problem(HttpStatus.CONFLICT, "conflict", "Conflict", detail));
    }

    /** 401 with a {@code WWW-Authenticate} challenge; {@code error} is the RFC 6750 code or null when no credentials came. */
    public static ErrorResponseException unauthorized(String detail, String error) {
        ErrorResponseException e = exception(problem(HttpStatus.UNAUTHORIZED, "unauthorized", "Unauthorized", detail));
        e.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE,
                error == null ? "Bearer realm=\"herald\"" : "Bearer realm=\"herald\", error=\"" + error + "\"");
        return e;
    }

    public static ErrorResponseException forbidden(String detail) {
        return exception(problem(HttpStatus.FORBIDDEN, "forbidden", "Forbidden", detail));
    }

    public static ErrorResponseException idempotencyKeyReused() {
        return exception(problem(HttpStatus.UNPROCESSABLE_CONTENT, "idempotency-key-reused", "Idempotency key reused",
                "this Idempotency-Key was used for a different request; use a new key for a new message"));
    }

    public static ErrorResponseException idempotencyKeyInProgress() {
        ErrorResponseException e = exception(problem(HttpStatus.CONFLICT, "idempotency-key-in-progress",
                "Request in progress", "a request with this Idempotency-Key is still being processed; retry shortly"));
        e.getHeaders().set(HttpHeaders.RETRY_AFTER, "1");
        return e;
    }

    /** 503 with {@code Retry-After}: a dependency (RabbitMQ, Redis) did not do its part; nothing was accepted. */
    public static ErrorResponseException unavailable(String detail, int retryAfterSeconds) {
        ErrorResponseException e = exception(problem(HttpStatus.SERVICE_UNAVAILABLE, "unavailable",
                "Service unavailable", detail));
        e.getHeaders().set(HttpHeaders.RETRY_AFTER, String.valueOf(retryAfterSeconds));
        return e;
    }

    /** 429 with {@code Retry-After}: the app sent more requests than its rate limit allows. */
    public static ErrorResponseException tooManyRequests(String detail, long retryAfterSeconds) {
        ErrorResponseException e = exception(problem(HttpStatus.TOO_MANY_REQUESTS, "rate-limited", "Too many requests", detail));
        e.getHeaders().set(HttpHeaders.RETRY_AFTER, String.valueOf(retryAfterSeconds));
        return e;
    }
}
