package dev.herald.store.audit;

import java.util.Optional;

/**
 * One page of the audit log, newest first.
 *
 * @param limit  most entries on the page
 * @param before only entries older than this entry id (the previous page's {@code next})
 * @param action only entries of this action
 * @param app    only entries about this app
 */
public record AuditQuery(int limit, Optional<String> before, Optional<String> action, Optional<String> app) {
    public AuditQuery {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1");
        }
    }
}
