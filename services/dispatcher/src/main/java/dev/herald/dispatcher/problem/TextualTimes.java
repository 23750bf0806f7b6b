package dev.herald.dispatcher.problem;

import java.time.Instant;
import java.time.LocalDateTime;
import java.util.regex.Pattern;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.ext.javatime.deser.InstantDeserializer;
import tools.jackson.databind.ext.javatime.deser.LocalDateTimeDeserializer;
import tools.jackson.databind.module.SimpleModule;

/**
 * Times read as the OpenAPI document types them, ISO-8601 strings only: Jackson alone would read
 * {@code "sendAt": 0} (and the string {@code "0"}) as an epoch second and {@code [2026, 12, 1, 7, 0]}
 * as a local date-time.
 */
final class TextualTimes {

    private TextualTimes() {
    }

    static SimpleModule module() {
        SimpleModule module = new SimpleModule("herald-textual-times");
        module.addDeserializer(Instant.class, new StringsOnly<>(Instant.class, InstantDeserializer.INSTANT));
        module.addDeserializer(LocalDateTime.class, new StringsOnly<>(LocalDateTime.class, LocalDateTimeDeserializer.INSTANCE));
        return module;
    }

    private static final Pattern EPOCH = Pattern.compile("\\s*[+-]?[0-9]+(\\.[0-9]*)?\\s*");

    private static final class StringsOnly<T> extends ValueDeserializer<T> {
        private final Class<T> type;
        private final ValueDeserializer<T> parser;

        StringsOnly(Class<T> type, ValueDeserializer<T> parser) {
            this.type = type;
            this.parser = parser;
        }

        @Override
        @SuppressWarnings("unchecked")
        public T deserialize(JsonParser p, DeserializationContext context) {
            if (p.currentToken() != JsonToken.VALUE_STRING) {
                return (T) context.handleUnexpectedToken(type, p);
            }
            // Jackson reads a string of digits as an epoch too; an ISO-8601 time always has a 'T'.
            if (EPOCH.matcher(p.getString()).matches()) {
                return (T) context.handleWeirdStringValue(type, p.getString(), "an ISO-8601 time, not an epoch");
            }
            return parser.deserialize(p, context);
        }
    }
}
