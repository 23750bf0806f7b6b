package dev.herald.sandbox.control;

import dev.herald.sandbox.faults.FaultInjector;
import dev.herald.sandbox.faults.Faults;
import dev.herald.sandbox.faults.FaultsUpdate;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ServerWebInputException;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Reads and changes fault injection at runtime; bad values are refused as problem+json. */
@RestController
@RequestMapping("/sandbox/faults")
class FaultsController {
    private static final Set<String> FIELDS = Arrays.stream(FaultsUpdate.class.getRecordComponents())
            .map(RecordComponent::getName).collect(Collectors.toCollection(LinkedHashSet::new));

    private final FaultInjector faults;
    private final JsonMapper json;

    FaultsController(FaultInjector faults, JsonMapper json) {
        this.faults = faults;
        this.json = json;
    }

    @GetMapping
    Faults faults() {
        return faults.faults();
    }

    /** Fields left out keep their value; answers the settings now in force. */
    @PutMapping
    Faults update(@RequestBody JsonNode body) {
        if (!body.isObject()) {
            throw new IllegalArgumentException("expected a JSON object with any of " + FIELDS);
        }
        for (String name : body.propertyNames()) {
            if (!FIELDS.contains(name)) { // a typo must not pass as "no change"
                throw new IllegalArgumentException("unknown field '" + name + "', expected any of " + FIELDS);
            }
        }
        return faults.update(json.treeToValue(body, FaultsUpdate.class));
    }

    @ExceptionHandler(IllegalArgumentException.class)
    ProblemDetail invalid(IllegalArgumentException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
        problem.setTitle("Invalid fault settings");
        return problem;
    }

    @ExceptionHandler({ServerWebInputException.class, JacksonException.class})
    ProblemDetail unreadable(Exception e) {
        String message = e instanceof JacksonException jackson ? jackson.getOriginalMessage() : e.getMessage();
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
                message == null ? "unreadable body" : message.lines().findFirst().orElse(message));
        problem.setTitle("Unreadable fault settings");
        return problem;
    }
}
