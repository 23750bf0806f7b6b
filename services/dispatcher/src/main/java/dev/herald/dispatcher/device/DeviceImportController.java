package dev.herald.dispatcher.device;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.contract.Channel;
import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.device.DeviceController.DeviceRequest;
import dev.herald.dispatcher.problem.JsonErrors;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.problem.RequestValidator;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.device.Registration;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

/**
 * Bulk device import: an NDJSON body, one device a line, read as it streams in and registered in
 * batches (one Redis call per batch, a few batches in flight while the next lines are read). Each
 * line is what {@code PUT .../devices/{deviceId}} takes plus its {@code deviceId}, and replaces that
 * device whole, so running the same import again leaves the same devices. A line that cannot be
 * registered is reported with its number and a problem (as the single-device API would answer it)
 * and the import goes on. Lines before a failure of Redis (503) stay imported: run it again.
 */
@AppApi
@RestController
public class DeviceImportController {
    static final String NDJSON = "application/x-ndjson";
    /** Devices per Redis call: big enough to amortise the round trip, small enough not to hold Redis long. */
    static final int BATCH_SIZE = 500;
    /** Batches sent and not yet answered while the next lines are read. */
    static final int BATCHES_IN_FLIGHT = 4;
    /** A device with 100 topics of 100 characters and a 4 kB token fits; longer lines are refused. */
    static final int MAX_LINE_BYTES = 32 * 1024;
    /** Line problems listed in the answer; the rest are counted ({@code errorsOmitted}). */
    static final int MAX_ERRORS = 1000;

    /** One line of the import: a device as {@code PUT .../devices/{deviceId}} takes it, with its id. */
    record ImportLine(String deviceId, Channel channel, String token, List<String> topics, String timeZone,
                      DeviceController.WebPushSubscriptionJson subscription) {
    }

    /**
     * What an import did: {@code lines} read (blank ones skipped), devices {@code imported} (of them
     * {@code created} new, {@code updated} replaced), lines {@code failed}, and the first
     * {@value #MAX_ERRORS} failures as problems with their {@code line}.
     */
    public record ImportReport(long lines, long imported, long created, long updated, long failed,
                               List<Map<String, Object>> errors, long errorsOmitted) {
    }

    private final DeviceRegistry devices;
    private final RequestValidator validator;
    private final WebPushEndpoints endpoints;
    private final ObjectReader lines;

    public DeviceImportController(DeviceRegistry devices, RequestValidator validator, WebPushEndpoints endpoints,
                                  JsonMapper json) {
        this.devices = devices;
        this.validator = validator;
        this.endpoints = endpoints;
        this.lines = json.readerFor(ImportLine.class);
    }

    @PostMapping(path = "/v1/apps/{appId}/device-imports", consumes = NDJSON)
    ImportReport importDevices(AuthenticatedApp app, HttpServletRequest request) throws IOException {
        Batches batches = new Batches(app.id());
        List<Map<String, Object>> errors = new ArrayList<>();
        long read = 0;
        long failed = 0;
        BoundedLines body = new BoundedLines(request.getInputStream(), MAX_LINE_BYTES);
        for (BoundedLines.Line line = body.next(); line != null; line = body.next()) {
            if (!line.tooLong() && line.text().isBlank()) {
                continue;
            }
            read++;
            try {
                batches.add(registration(line));
            } catch (ErrorResponseException e) {
                failed++;
                if (errors.size() < MAX_ERRORS) {
                    errors.add(lineProblem(line.number(), e.getBody()));
                }
            }
        }
        long created = batches.finish();
        long imported = read - failed;
        return new ImportReport(read, imported, created, imported - created, failed, errors, failed - errors.size());
    }

    private Registration registration(BoundedLines.Line line) {
        if (line.tooLong()) {
            throw Problems.exception(Problems.problem(HttpStatus.BAD_REQUEST, "line-too-long", "Line too long",
                    "the line is longer than " + MAX_LINE_BYTES + " bytes"));
        }
        ImportLine device;
        try {
            device = lines.readValue(line.text());
        } catch (JacksonException e) {
            throw Problems.exception(JsonErrors.describe(e));
        }
        if (device == null) {
            throw Problems.exception(Problems.malformedJson("the line must be a JSON object"));
        }
        return DeviceController.registration(device.deviceId(),
                new DeviceRequest(device.channel(), device.token(), device.topics(), device.timeZone(), device.subscription()),
                validator, endpoints);
    }

    private static Map<String, Object> lineProblem(long line, ProblemDetail problem) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("line", line);
        error.put("type", problem.getType().toString());
        error.put("title", problem.getTitle());
        error.put("status", problem.getStatus());
        error.put("detail", problem.getDetail());
        if (problem.getProperties() != null) {
            error.putAll(problem.getProperties());
        }
        return error;
    }

    /** The registrations of one import, sent a batch at a time with a few batches in flight. */
    private final class Batches {
        private final String appId;
        private final Deque<CompletableFuture<Long>> inFlight = new ArrayDeque<>();
        private List<Registration> batch = new ArrayList<>(BATCH_SIZE);
        private long created;

        Batches(String appId) {
            this.appId = appId;
        }

        void add(Registration device) {
            batch.add(device);
            if (batch.size() == BATCH_SIZE) {
                send();
            }
        }

        private void send() {
            inFlight.add(devices.registerAll(appId, batch));
            batch = new ArrayList<>(BATCH_SIZE);
            while (inFlight.size() > BATCHES_IN_FLIGHT) {
                created += await(inFlight.poll());
            }
        }

        /** Sends what is left and waits for every batch; how many devices were new. */
        long finish() {
            if (!batch.isEmpty()) {
                send();
            }
            while (!inFlight.isEmpty()) {
                created += await(inFlight.poll());
            }
            return created;
        }
    }
}
