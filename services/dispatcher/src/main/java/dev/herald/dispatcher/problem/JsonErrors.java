package dev.herald.dispatcher.problem;

import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.http.ProblemDetail;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.core.exc.UnexpectedEndOfInputException;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;
import tools.jackson.databind.exc.ValueInstantiationException;

/**
 * Turns a body Jackson could not read into a problem that says where and what, in words of the
 * API (field path and expected JSON type) rather than Java class names. The submitted text is never
 * quoted back: it may hold a credential.
 */
public final class JsonErrors {
    private static final Map<Class<?>, String> TYPES = Map.ofEntries(
            Map.entry(String.class, "a string"),
            Map.entry(Integer.class, "an integer"), Map.entry(int.class, "an integer"),
            Map.entry(Long.class, "an integer"), Map.entry(long.class, "an integer"),
            Map.entry(Boolean.class, "a boolean"), Map.entry(boolean.class, "a boolean"),
            Map.entry(Double.class, "a number"), Map.entry(double.class, "a number"),
            // an instant that did not parse: Jackson's parser wants the seconds (RFC 3339 requires them)
            Map.entry(java.time.Instant.class, "a date-time with an offset, seconds included (2026-06-01T09:00:00Z)"));

    private JsonErrors() {
    }

    public static ProblemDetail describe(JacksonException e) {
        String field = path(e.getPath());
        if (e instanceof UnrecognizedPropertyException unknown) {
            return field(field, "unknown field; known fields here: " + known(unknown.getKnownPropertyIds()));
        }
        if (e instanceof InvalidFormatException invalid && invalid.getTargetType() != null
                && invalid.getTargetType().isEnum()) {
            return field(field, "must be one of " + enumValues(invalid.getTargetType()));
        }
        if (e instanceof MismatchedInputException mismatch) {
            Class<?> target = mismatch.getTargetType();
            if (target != null && target.isEnum()) {
                return field(field, "must be one of " + enumValues(target));
            }
            String expected = expected(target);
            if (field.isEmpty()) {
                return Problems.malformedJson("the body must be " + expected + at(e.getLocation()));
            }
            return field(field, "must be " + expected);
        }
        if (e instanceof InputCoercionException) {
            return field(field.isEmpty() ? "body" : field, "number out of range");
        }
        if (e instanceof ValueInstantiationException) {
            return field(field.isEmpty() ? "body" : field, "invalid value");
        }
        if (e instanceof StreamConstraintsException) {
            // Jackson's message states the limit exceeded (nesting depth, number or string length); no content.
            return Problems.malformedJson("the JSON exceeds a parser limit: " + e.getOriginalMessage());
        }
        if (e instanceof UnexpectedEndOfInputException) {
            return Problems.malformedJson("the JSON ends unexpectedly" + at(e.getLocation()));
        }
        if (e instanceof StreamReadException) {
            return Problems.malformedJson(syntax(e.getOriginalMessage()) + at(e.getLocation()));
        }
        return Problems.malformedJson("the body is not valid JSON" + at(e.getLocation()));
    }

    private static ProblemDetail field(String field, String message) {
        return Problems.invalidField(field.isEmpty() ? "body" : field, message).getBody();
    }

    private static String syntax(String message) {
        if (message == null) {
            return "invalid JSON";
        }
        String m = message.toLowerCase(java.util.Locale.ROOT);
        if (m.startsWith("unrecognized token")) {
            return "invalid JSON: unrecognized token (strings must be in double quotes)";
        }
        if (m.startsWith("unexpected character")) {
            return "invalid JSON: unexpected character";
        }
        if (m.contains("trailing")) {
            return "invalid JSON: content after the end of the JSON value";
        }
        if (m.contains("illegal unquoted character") || m.contains("control character")) {
            return "invalid JSON: unescaped control character in a string";
        }
        if (m.contains("unexpected end-of-input")) {
            return "the JSON ends unexpectedly";
        }
        if (m.contains("invalid utf-8") || m.contains("invalid utf8")) {
            return "invalid JSON: the body is not valid UTF-8";
        }
        return "invalid JSON";
    }

    private static String at(TokenStreamLocation location) {
        if (location == null || location == TokenStreamLocation.NA || location.getLineNr() < 1) {
            return "";
        }
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    static String path(List<JacksonException.Reference> references) {
        StringBuilder path = new StringBuilder();
        for (JacksonException.Reference reference : references) {
            if (reference.getPropertyName() != null) {
                if (!path.isEmpty()) {
                    path.append('.');
                }
                path.append(reference.getPropertyName());
            } else if (reference.getIndex() >= 0) {
                path.append('[').append(reference.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    private static String expected(Class<?> target) {
        if (target == null) {
            return "of another type";
        }
        String known = TYPES.get(target);
        if (known != null) {
            return known;
        }
        if (Collection.class.isAssignableFrom(target) || target.isArray()) {
            return "an array";
        }
        if (target.isRecord() || Map.class.isAssignableFrom(target)
                || target.getName().startsWith("tools.jackson.databind.node.ObjectNode")) {
            return "an object";
        }
        if (target.getName().startsWith("tools.jackson.databind")) {
            return "a JSON value";
        }
        return "an object";
    }

    private static String enumValues(Class<?> type) {
        return Arrays.stream(type.getEnumConstants()).map(Object::toString).toList().toString();
    }

    private static String known(Collection<Object> ids) {
        return ids == null ? "[]" : ids.stream().map(String::valueOf).sorted().collect(Collectors.joining(", ", "[", "]"));
    }
}
