package dev.herald.store.audit;

import java.time.Instant;

/**
 * An admin action as the log keeps it: its id (the stream entry id, newest is greatest; a page's
 * {@code before}) and when it was recorded, then the fields of its {@link AuditEvent}.
 */
public record AuditEntry(String id, Instant at, String actor, String action, String app, String target, String detail,
                         String address, String forwardedFor) {
}
