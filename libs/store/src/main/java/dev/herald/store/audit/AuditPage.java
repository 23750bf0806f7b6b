package dev.herald.store.audit;

import java.util.List;

/**
 * Entries newest first; {@code next} (null at the end of the log) is the {@code before} of the
 * following page. A filtered page may hold fewer than its limit and still have a {@code next}: one
 * read looks at a bounded number of entries.
 */
public record AuditPage(List<AuditEntry> entries, String next) {
}
