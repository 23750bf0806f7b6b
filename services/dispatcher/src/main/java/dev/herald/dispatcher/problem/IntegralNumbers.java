package dev.herald.dispatcher.problem;

import java.math.BigDecimal;
import java.util.function.Function;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.module.SimpleModule;

/**
 * Integer fields read as JSON Schema (and so the OpenAPI document) types them: {@code 60} and
 * {@code 60.0} are the integer 60, {@code 60.5} is no integer (a 400), a number past the field's
 * range is out of range (a 400). Jackson alone would truncate 60.5 to 60.
 */
final class IntegralNumbers {

    private IntegralNumbers() {
    }

    static SimpleModule module() {
        SimpleModule module = new SimpleModule("herald-integral-numbers");
        module.addDeserializer(Long.class, new Whole<>(Long.class, BigDecimal::longValueExact));
        module.addDeserializer(Integer.class, new Whole<>(Integer.class, BigDecimal::intValueExact));
        return module;
    }

    private static final class Whole<T> extends ValueDeserializer<T> {
        private final Class<T> type;
        private final Function<BigDecimal, T> exact;

        Whole(Class<T> type, Function<BigDecimal, T> exact) {
            this.type = type;
            this.exact = exact;
        }

        @Override
        @SuppressWarnings("unchecked")
        public T deserialize(JsonParser p, DeserializationContext context) {
            JsonToken token = p.currentToken();
            if (token != JsonToken.VALUE_NUMBER_INT && token != JsonToken.VALUE_NUMBER_FLOAT) {
                return (T) context.handleUnexpectedToken(type, p);
            }
            BigDecimal value = p.getDecimalValue();
            if (value.signum() != 0 && value.stripTrailingZeros().scale() > 0) {
                return context.reportInputMismatch(type, "not an integer");
            }
            try {
                return exact.apply(value);
            } catch (ArithmeticException e) {
                throw new InputCoercionException(p, "number out of range", token, type);
            }
        }
    }
}
