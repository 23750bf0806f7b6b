package dev.herald.dispatcher.audit;

import dev.herald.dispatcher.Futures;
import dev.herald.dispatcher.auth.AdminCaller;
import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.audit.AuditEvent;
import dev.herald.store.audit.AuditLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * Records an admin action once it took effect. A record that cannot be written never passes
 * silently: the entry goes to the log at ERROR (so it survives in the log pipeline) and the request
 * is answered 503, whose detail says the change itself was made. Failing the action instead would
 * need the write first, which records actions that then fail (404, 409, a bad credential); and
 * Redis holds both, so when the audit write fails the action's own write almost always failed too.
 */
@Component
public class AdminAudit {
    private static final Logger log = LoggerFactory.getLogger(AdminAudit.class);

    private final AuditLog auditLog;

    public AdminAudit(AuditLog auditLog) {
        this.auditLog = auditLog;
    }

    /**
     * @param target what in the app was acted on (a key id, a provider, a device id), or null
     * @param detail non-secret particulars (a credential's fingerprint, new limits), or null
     */
    public void record(AdminCaller caller, String action, String app, String target, String detail) {
        AuditEvent event = new AuditEvent(caller.actor(), action, app, target, detail, caller.address(), caller.forwardedFor());
        try {
            Futures.await(auditLog.append(event));
        } catch (RuntimeException e) {
            log.error("audit entry NOT recorded ({}: {}): {}", e.getClass().getSimpleName(), e.getMessage(), event);
            throw Problems.exception(Problems.problem(HttpStatus.SERVICE_UNAVAILABLE, "audit-unavailable", "Not audited",
                    "the change was made, but the audit log could not record it (Redis): the entry is in the dispatcher's "
                            + "log; do not repeat the change"));
        }
    }
}
