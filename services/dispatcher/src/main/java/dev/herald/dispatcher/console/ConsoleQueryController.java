package dev.herald.dispatcher.console;

import static dev.herald.dispatcher.Futures.await;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.herald.contract.Channel;
import dev.herald.dispatcher.auth.AppApi;
import dev.herald.dispatcher.auth.AuthenticatedApp;
import dev.herald.dispatcher.device.DeviceController;
import dev.herald.dispatcher.problem.PageLimits;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.status.StatusController.MessageView;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.mqtt.CredentialGenerations;
import dev.herald.store.mqtt.DeviceSessions;
import dev.herald.store.mqtt.MqttCredentials;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.store.status.StatsBucket;
import io.lettuce.core.ScoredValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * What the console reads of one app: {@code GET .../messages} (recent messages, newest first, paged
 * by a cursor, optionally only those in one state), {@code GET .../stats/history} (counts per minute
 * or hour) and {@code GET .../devices?channel=&token=} (the device holding a token).
 */
@AppApi
@RestController
public class ConsoleQueryController {
    /** The states a message can be in (MessageStatus derives them): what {@code state} may ask for. */
    static final Set<String> STATES = Set.of("scheduled", "accepted", "queued", "sending", "sent", "delivered",
            "failed", "expired", "cancelling", "cancelled");
    static final int MAX_LIMIT = 100;
    /** How many listed ids one page reads at most while filtering by state: a bounded cost per request. */
    static final int MAX_SCANNED = 500;
    /** A page cursor as {@link #messages} makes it, and as the document's pattern states it; 18 digits fit a long. */
    static final Pattern CURSOR = Pattern.compile("([0-9]{1,18})\\.([0-9]{1,18})");
    static final Map<String, Duration> WINDOWS = Map.of("hour", Duration.ofHours(1), "day", Duration.ofDays(1),
            "week", Duration.ofDays(7));

    /** @param next the cursor of the next page ({@code before}), absent on the last page */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record MessagePage(List<MessageView> messages, String next) {
    }

    /** @param bucket {@code minute} or {@code hour} */
    public record History(String window, String bucket, List<StatsBucket> buckets) {
    }

    public record DeviceMatches(List<DeviceController.DeviceResponse> devices) {
    }

    private final MessageStatusStore status;
    private final DeviceRegistry devices;
    private final MqttCredentials credentials;
    private final CredentialGenerations generations;
    private final DeviceSessions sessions;

    public ConsoleQueryController(MessageStatusStore status, DeviceRegistry devices, MqttCredentials credentials,
                                  CredentialGenerations generations, DeviceSessions sessions) {
        this.status = status;
        this.devices = devices;
        this.credentials = credentials;
        this.generations = generations;
        this.sessions = sessions;
    }

    /**
     * A page cursor is {@code <ms>.<skip>}: continue at messages accepted at or before that millisecond,
     * skipping the ones of that millisecond already shown, so messages accepted in the same millisecond
     * are neither lost nor shown twice across pages.
     */
    @GetMapping("/v1/apps/{appId}/messages")
    MessagePage messages(AuthenticatedApp app, @RequestParam(required = false) String limit,
                         @RequestParam(required = false) String before, @RequestParam(required = false) String state) {
        int size = PageLimits.parse(limit, 20, MAX_LIMIT);
        long atMost = Long.MAX_VALUE;
        long skip = 0;
        if (before != null) {
            Matcher cursor = CURSOR.matcher(before);
            if (!cursor.matches()) {
                throw Problems.invalidField("before", "must be the next cursor of a previous page");
            }
            atMost = Long.parseLong(cursor.group(1));
            skip = Long.parseLong(cursor.group(2));
        }
        if (state != null && !STATES.contains(state)) {
            throw Problems.invalidField("state", "must be one of " + STATES.stream().sorted().toList());
        }
        List<MessageView> page = new ArrayList<>();
        int scanned = 0;
        while (page.size() < size && scanned < MAX_SCANNED) {
            int asked = size - page.size();
            List<ScoredValue<String>> ids = await(status.recent(app.id(), atMost, skip, asked));
            scanned += ids.size();
            List<CompletableFuture<Optional<MessageStatus>>> reads = ids.stream().map(id -> status.find(id.getValue())).toList();
            List<String> gone = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++) {
                Optional<MessageStatus> found = await(reads.get(i));
                if (found.isEmpty()) {
                    gone.add(ids.get(i).getValue());
                } else if (state == null || state.equals(found.get().state())) {
                    page.add(MessageView.of(found.get()));
                }
            }
            for (ScoredValue<String> id : ids) {
                long at = (long) id.getScore();
                skip = at == atMost ? skip + 1 : 1;
                atMost = at;
            }
            // Forgotten ids leave the index: the next read must not skip past ids it never saw.
            skip -= gone.stream().filter(id -> ids.stream().anyMatch(listed -> listed.getValue().equals(id)
                    && (long) listed.getScore() == ids.getLast().getScore())).count();
            await(status.forget(app.id(), gone));
            if (ids.size() < asked) {
                return new MessagePage(page, null);
            }
        }
        return new MessagePage(page, atMost + "." + skip);
    }

    @GetMapping("/v1/apps/{appId}/stats/history")
    History history(AuthenticatedApp app, @RequestParam(required = false) String window) {
        // Not defaultValue: Spring would apply it to an empty "?window=" too, which the document refuses.
        window = window == null ? "day" : window;
        Duration span = WINDOWS.get(window);
        if (span == null) {
            throw Problems.invalidField("window", "must be one of hour, day, week");
        }
        return new History(window, span.compareTo(Duration.ofHours(1)) <= 0 ? "minute" : "hour",
                await(status.history(app.id(), span)));
    }

    @GetMapping("/v1/apps/{appId}/devices")
    DeviceMatches deviceByToken(AuthenticatedApp app, @RequestParam String channel, @RequestParam String token) {
        Channel named = Arrays.stream(Channel.values()).filter(c -> c.name().equals(channel)).findFirst()
                .orElseThrow(() -> Problems.invalidField("channel", "must be one of " + Arrays.toString(Channel.values())));
        if (!token.matches(dev.herald.dispatcher.Ids.TOKEN)) {
            throw Problems.invalidField("token", "must be 1 to 4096 printable ASCII characters without spaces");
        }
        Optional<String> deviceId = await(devices.deviceOfToken(app.id(), named, token));
        List<DeviceController.DeviceResponse> found = deviceId
                .flatMap(id -> await(devices.find(app.id(), id)))
                .map(device -> List.of(DeviceController.describe(device, credentials, generations, sessions))).orElse(List.of());
        return new DeviceMatches(found);
    }

}
