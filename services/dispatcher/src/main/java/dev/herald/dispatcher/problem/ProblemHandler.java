package dev.herald.dispatcher.problem;

import dev.herald.store.crypto.CredentialKeyException;
import io.lettuce.core.RedisException;
import java.util.List;
import org.apache.tomcat.util.http.InvalidParameterException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.validation.FieldError;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.MethodArgumentNotValidException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;
import tools.jackson.core.JacksonException;

/**
 * Every exception a controller or interceptor raises becomes a problem: Spring MVC's own
 * (405, 415, 406, unknown route...) through {@link ResponseEntityExceptionHandler}, unreadable
 * bodies with the field and expected type, validation errors with their fields, Redis trouble as
 * 503. Anything else is a bug of ours: logged, and answered 500 without details.
 */
@RestControllerAdvice
public class ProblemHandler extends ResponseEntityExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(ProblemHandler.class);

    @Override
    protected ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException ex, HttpHeaders headers,
                                                                  HttpStatusCode status, WebRequest request) {
        ProblemDetail problem = describe(ex);
        return handleExceptionInternal(ex, problem, headers, HttpStatusCode.valueOf(problem.getStatus()), request);
    }

    static ProblemDetail describe(Throwable ex) {
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof RequestSizeLimitFilter.TooLargeException tooLarge) {
                return Problems.tooLarge(tooLarge.getMessage()).getBody();
            }
        }
        for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
            if (cause instanceof JacksonException json) {
                return JsonErrors.describe(json);
            }
        }
        String message = ex.getMessage() == null ? "" : ex.getMessage();
        if (message.startsWith("Required request body is missing")) {
            return Problems.malformedJson("the request body is missing: send a JSON object");
        }
        return Problems.malformedJson("the request body could not be read as JSON");
    }

    @Override
    protected ResponseEntity<Object> handleMethodArgumentNotValid(MethodArgumentNotValidException ex, HttpHeaders headers,
                                                                  HttpStatusCode status, WebRequest request) {
        List<Problems.FieldError> errors = new java.util.ArrayList<>();
        for (FieldError error : ex.getBindingResult().getFieldErrors()) {
            errors.add(new Problems.FieldError(error.getField(), error.getDefaultMessage()));
        }
        ex.getBindingResult().getGlobalErrors().forEach(error ->
                errors.add(new Problems.FieldError("body", error.getDefaultMessage())));
        errors.sort(java.util.Comparator.comparing(Problems.FieldError::field));
        ErrorResponseException problem = Problems.invalid(errors);
        return handleExceptionInternal(ex, problem.getBody(), headers, HttpStatus.BAD_REQUEST, request);
    }

    /** Every problem, Spring MVC's own included, carries a type of ours (the document promises one). */
    @Override
    protected ResponseEntity<Object> createResponseEntity(Object body, HttpHeaders headers, HttpStatusCode status,
                                                          WebRequest request) {
        return super.createResponseEntity(body instanceof ProblemDetail problem ? Problems.typed(problem) : body,
                headers, status, request);
    }

    /** Tomcat parses the query string when a handler first reads a parameter, and refuses bad encoding then. */
    @ExceptionHandler(InvalidParameterException.class)
    ResponseEntity<Object> malformedQuery(InvalidParameterException ex, WebRequest request) {
        // Tomcat's message quotes the offending text: not passed on.
        ProblemDetail problem = Problems.malformedRequest(
                "the query string could not be parsed (a parameter without a name, or bad %-encoding)");
        return handleExceptionInternal(ex, problem, new HttpHeaders(), HttpStatus.BAD_REQUEST, request);
    }

    /** Redis refused or timed out: nothing the client sent was at fault, and a retry may well succeed. */
    @ExceptionHandler(RedisException.class)
    ResponseEntity<Object> redisUnavailable(RedisException ex, WebRequest request) {
        log.warn("Redis unavailable: {}", ex.toString());
        ErrorResponseException problem = Problems.unavailable("the registry (Redis) is unavailable; retry later", 5);
        return handleExceptionInternal(problem, problem.getBody(), problem.getHeaders(), problem.getStatusCode(), request);
    }

    /**
     * A stored credential no configured key opens (a previous key removed before the re-encryption):
     * the operator's to fix, so the answer says which key is missing and no stack trace is logged.
     * The message names key ids and settings only.
     */
    @ExceptionHandler(CredentialKeyException.class)
    ResponseEntity<Object> credentialKeyMissing(CredentialKeyException ex, WebRequest request) {
        log.warn("on {}: {}", request.getDescription(false), ex.getMessage());
        ErrorResponseException problem = Problems.exception(Problems.problem(HttpStatus.SERVICE_UNAVAILABLE,
                "credential-key-missing", "Credential key missing", ex.getMessage()));
        return handleExceptionInternal(problem, problem.getBody(), problem.getHeaders(), problem.getStatusCode(), request);
    }

    @ExceptionHandler(Exception.class)
    ResponseEntity<Object> unexpected(Exception ex, WebRequest request) {
        log.error("unexpected error on {}", request.getDescription(false), ex);
        ProblemDetail problem = Problems.problem(HttpStatus.INTERNAL_SERVER_ERROR, "internal", "Internal error",
                "an unexpected error occurred; it has been logged");
        return handleExceptionInternal(ex, problem, new HttpHeaders(), HttpStatus.INTERNAL_SERVER_ERROR, request);
    }
}
