package dev.herald.dispatcher.schedule;

import static dev.herald.dispatcher.Futures.await;

import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.audit.AdminAudit;
import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.dispatcher.auth.AdminCaller;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.app.AppStore;
import java.util.Optional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * An app's default time zone ({@code /v1/apps/{appId}/time-zone}, admin API): where a send at a
 * local time reaches the app's devices that registered no zone, and its tokens. UTC when unset.
 */
@AdminApi
@RestController
public class AppTimeZoneController {

    /** The app's default zone; {@code timeZone} is an IANA id such as {@code Europe/Paris}. */
    public record AppTimeZone(String timeZone) {
    }

    private final AppStore apps;
    private final AdminAudit audit;

    public AppTimeZoneController(AppStore apps, AdminAudit audit) {
        this.apps = apps;
        this.audit = audit;
    }

    @PutMapping("/v1/apps/{appId}/time-zone")
    AppTimeZone set(AdminCaller caller, @PathVariable String appId, @RequestBody AppTimeZone request) {
        Ids.appId(appId);
        String zone = TimeZones.parse("timeZone", request.timeZone()).getId();
        if (!await(apps.setTimeZone(appId, Optional.of(zone)))) {
            throw unknownApp(appId);
        }
        audit.record(caller, "time-zone.set", appId, null, zone);
        return new AppTimeZone(zone);
    }

    @GetMapping("/v1/apps/{appId}/time-zone")
    AppTimeZone get(@PathVariable String appId) {
        Ids.appId(appId);
        if (await(apps.load(appId)).isEmpty()) {
            throw unknownApp(appId);
        }
        return new AppTimeZone(await(apps.timeZone(appId)).orElse(TimeZones.FALLBACK.getId()));
    }

    @DeleteMapping("/v1/apps/{appId}/time-zone")
    ResponseEntity<Void> clear(AdminCaller caller, @PathVariable String appId) {
        Ids.appId(appId);
        if (!await(apps.setTimeZone(appId, Optional.empty()))) {
            throw unknownApp(appId);
        }
        audit.record(caller, "time-zone.deleted", appId, null, null);
        return ResponseEntity.noContent().build();
    }

    private static RuntimeException unknownApp(String appId) {
        return Problems.notFound("app " + appId + " does not exist");
    }
}
