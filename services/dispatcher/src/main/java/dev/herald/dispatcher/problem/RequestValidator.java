package dev.herald.dispatcher.problem;

import jakarta.validation.ConstraintViolation;
import jakarta.validation.Path;
import jakarta.validation.Validator;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import org.springframework.stereotype.Component;

/**
 * Runs Bean Validation on a request body and answers 400 with every violation, each named by its
 * JSON path ({@code to.tokens[3].token}). Done here rather than by {@code @Valid} so the paths are
 * ours and no rejected value is ever read back or echoed.
 */
@Component
public class RequestValidator {
    private final Validator validator;

    public RequestValidator(Validator validator) {
        this.validator = validator;
    }

    public <T> T validate(T body) {
        Set<ConstraintViolation<T>> violations = validator.validate(body);
        if (!violations.isEmpty()) {
            List<Problems.FieldError> errors = violations.stream()
                    .map(v -> new Problems.FieldError(path(v.getPropertyPath()), v.getMessage()))
                    .distinct()
                    .sorted(Comparator.comparing(Problems.FieldError::field).thenComparing(Problems.FieldError::message))
                    .limit(20)
                    .toList();
            throw Problems.invalid(errors);
        }
        return body;
    }

    static String path(Path path) {
        StringBuilder out = new StringBuilder();
        for (Path.Node node : path) {
            if (node.isInIterable()) {
                if (node.getIndex() != null) {
                    out.append('[').append(node.getIndex()).append(']');
                } else if (node.getKey() != null) {
                    String key = String.valueOf(node.getKey());
                    out.append('[').append(key.length() > 40 ? key.substring(0, 40) + "..." : key).append(']');
                }
            }
            String name = node.getName();
            if (name != null && !name.startsWith("<")) {
                if (!out.isEmpty()) {
                    out.append('.');
                }
                out.append(name);
            }
        }
        return out.isEmpty() ? "body" : out.toString();
    }
}
