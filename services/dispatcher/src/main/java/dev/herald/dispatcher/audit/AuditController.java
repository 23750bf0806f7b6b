package dev.herald.dispatcher.audit;

import static dev.herald.dispatcher.Futures.await;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.herald.dispatcher.Ids;
import dev.herald.dispatcher.auth.AdminApi;
import dev.herald.dispatcher.problem.PageLimits;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.audit.AuditEntry;
import dev.herald.store.audit.AuditLog;
import dev.herald.store.audit.AuditQuery;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /v1/audit}: the admin audit log, newest first, paged by {@code before} (admin token). */
@AdminApi
@RestController
public class AuditController {
    static final int MAX_LIMIT = 200;
    private static final Pattern ENTRY_ID = Pattern.compile("[0-9]{1,19}-[0-9]{1,19}");
    private static final Pattern ACTION = Pattern.compile("[a-z][a-z.-]{0,63}");

    /** @param next the {@code before} of the next page, absent on the last */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Page(List<Entry> entries, String next) {
    }

    /** An entry as the API shows it: fields the action has no value for are left out. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Entry(String id, Instant at, String actor, String action, String app, String target, String detail,
                        String address, String forwardedFor) {
        static Entry of(AuditEntry e) {
            return new Entry(e.id(), e.at(), e.actor(), e.action(), e.app(), e.target(), e.detail(), e.address(), e.forwardedFor());
        }
    }

    private final AuditLog auditLog;

    public AuditController(AuditLog auditLog) {
        this.auditLog = auditLog;
    }

    @GetMapping("/v1/audit")
    Page read(@RequestParam(required = false) String limit, @RequestParam(required = false) String before,
              @RequestParam(required = false) String action, @RequestParam(required = false) String app) {
        int size = PageLimits.parse(limit, 50, MAX_LIMIT);
        if (before != null && !ENTRY_ID.matcher(before).matches()) {
            throw Problems.invalidField("before", "must be the next of a previous page (an entry id such as 1732435200000-0)");
        }
        if (action != null && !ACTION.matcher(action).matches()) {
            throw Problems.invalidField("action", "must be an action name such as key.revoked");
        }
        if (app != null && !Ids.isAppId(app)) {
            throw Problems.invalidField("app", "must match " + Ids.APP_ID);
        }
        var page = await(auditLog.read(new AuditQuery(size, Optional.ofNullable(before), Optional.ofNullable(action),
                Optional.ofNullable(app))));
        return new Page(page.entries().stream().map(Entry::of).toList(), page.next());
    }
}
