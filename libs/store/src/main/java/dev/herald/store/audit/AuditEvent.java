package dev.herald.store.audit;

import java.util.Objects;

/**
 * An admin action as the caller reports it, before the log gives it an id and a time. Nothing here
 * may be a secret: {@code detail} carries at most a fingerprint of one.
 *
 * @param actor        who acted, e.g. {@code admin:1a2b3c4d} (a fingerprint of the credential used)
 * @param action       what was done, e.g. {@code key.revoked} (the admin API's list)
 * @param app          the app acted on; null for platform-wide actions
 * @param target       what inside the app, e.g. a key id, a provider, a device id; may be null
 * @param detail       non-secret particulars (a credential's fingerprint, the new limits); may be null
 * @param address      the client address the request came from
 * @param forwardedFor the request's {@code X-Forwarded-For}, as sent; may be null
 */
public record AuditEvent(String actor, String action, String app, String target, String detail, String address,
                         String forwardedFor) {
    public AuditEvent {
        Objects.requireNonNull(actor, "actor");
        Objects.requireNonNull(action, "action");
    }
}
