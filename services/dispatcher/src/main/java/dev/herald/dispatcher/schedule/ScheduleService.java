package dev.herald.dispatcher.schedule;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.dispatcher.problem.Problems;
import dev.herald.dispatcher.send.SendRequest;
import dev.herald.dispatcher.send.SendScheduler;
import dev.herald.store.app.AppStore;
import dev.herald.store.device.DeviceRegistry;
import dev.herald.store.device.DeviceRegistry.Resolved;
import dev.herald.store.schedule.ScheduledSends;
import dev.herald.store.status.MessageStatusStore;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import tools.jackson.databind.json.JsonMapper;

/**
 * Accepts sends for later. A {@code sendAt} send has one due time. A {@code sendAtLocalTime} send has
 * one per zone group: the zones where that wall-clock time is the same instant. The groups are fixed
 * when the send is accepted, the audience of each is resolved when it fires:
 * <ul>
 * <li>tokens carry no zone: one group, at the app's default zone;</li>
 * <li>a device list: the groups of its devices' zones now (a device that moves to a zone outside
 * them before the send fires is not sent to);</li>
 * <li>a topic: the groups of every zone in the time zone database (about 40 instants), since its
 * members may change until then; a group whose time has already passed is left out (devices there
 * get nothing: schedule the next day for them), and only when every group has passed is the send refused.</li>
 * </ul>
 * Grouping at fire time is what keeps a topic send right for devices that register or change zone
 * after it was accepted; fixing the instants at accept time is what lets the status show them.
 */
public final class ScheduleService implements SendScheduler {
    private final ScheduledSends sends;
    private final MessageStatusStore status;
    private final DeviceRegistry devices;
    private final AppStore apps;
    private final ScheduleProperties properties;
    private final JsonMapper json;
    private final Clock clock;
    private final ScheduleMetrics metrics;

    public ScheduleService(ScheduledSends sends, MessageStatusStore status, DeviceRegistry devices, AppStore apps,
                           ScheduleProperties properties, JsonMapper json, Clock clock, ScheduleMetrics metrics) {
        this.sends = sends;
        this.status = status;
        this.devices = devices;
        this.apps = apps;
        this.properties = properties;
        this.json = json;
        this.clock = clock;
        this.metrics = metrics;
    }

    @Override
    public List<Instant> dueTimes(String appId, SendRequest request) {
        if (request.sendAt() != null && request.sendAtLocalTime() != null) {
            throw Problems.invalidField("sendAt", "give sendAt or sendAtLocalTime, not both");
        }
        Instant now = clock.instant();
        if (request.sendAt() != null) {
            Instant due = request.sendAt();
            checkNotPast("sendAt", due, now, "");
            checkHorizon("sendAt", due, now);
            return List.of(due.isBefore(now) ? now : due);
        }
        LocalDateTime local = request.sendAtLocalTime();
        NavigableMap<Instant, String> groups = candidateGroups(appId, request, local);
        if (request.to().topic() != null) {
            groups.keySet().removeIf(due -> due.isBefore(now.minus(properties.pastTolerance())));
            if (groups.isEmpty()) {
                throw Problems.invalidField("sendAtLocalTime", local + " has passed in every time zone");
            }
        }
        groups.forEach((due, zone) -> checkNotPast("sendAtLocalTime", due, now, " in " + zone));
        checkHorizon("sendAtLocalTime", groups.lastKey(), now);
        return List.copyOf(groups.keySet());
    }

    /** Due instant -> one zone there (for messages), in time order. */
    private NavigableMap<Instant, String> candidateGroups(String appId, SendRequest request, LocalDateTime local) {
        ZoneId fallback = defaultZone(appId);
        NavigableMap<Instant, String> groups = new TreeMap<>();
        if (request.to().topic() != null) {
            TimeZones.all().forEach(zone -> groups.putIfAbsent(TimeZones.at(local, ZoneId.of(zone)), zone));
        } else if (request.to().devices() != null) {
            List<String> ids = request.to().devices().stream().distinct().toList();
            // Stale devices too: one registered again before the send fires is sent to, in its zone.
            Resolved found = await(devices.lookUp(appId, ids));
            Stream.concat(found.devices().stream(), found.staleDevices().stream())
                    .map(device -> TimeZones.stored(device.timeZone(), fallback))
                    .forEach(zone -> groups.putIfAbsent(TimeZones.at(local, zone), zone.getId()));
        }
        if (groups.isEmpty()) {
            groups.put(TimeZones.at(local, fallback), fallback.getId());
        }
        return groups;
    }

    ZoneId defaultZone(String appId) {
        return TimeZones.stored(await(apps.timeZone(appId)), TimeZones.FALLBACK);
    }

    private void checkNotPast(String field, Instant due, Instant now, String where) {
        if (due.isBefore(now.minus(properties.pastTolerance()))) {
            throw Problems.invalidField(field, "is in the past" + where + " (" + due + "; now is " + now + ")");
        }
    }

    private void checkHorizon(String field, Instant due, Instant now) {
        if (due.isAfter(now.plus(properties.maxHorizon()))) {
            throw Problems.invalidField(field, "is more than " + properties.maxHorizon().toDays()
                    + " days ahead (" + due + "); herald.dispatcher.schedule.max-horizon sets the limit");
        }
    }

    @Override
    public void schedule(String appId, String messageId, SendRequest request, List<Instant> dueTimes) {
        await(status.scheduled(messageId, appId, dueTimes, clock.instant()));
        List<Long> groups = dueTimes.stream().map(Instant::toEpochMilli).sorted().collect(Collectors.toList());
        try {
            await(sends.schedule(messageId, new ScheduledSends.Payload(appId, json.writeValueAsString(request),
                    request.sendAtLocalTime() != null, groups)));
        } catch (RuntimeException e) {
            // The client gets an error and no id: a status reading "scheduled" must not linger.
            status.discard(messageId);
            throw e;
        }
        metrics.scheduled(groups.size());
    }
}
