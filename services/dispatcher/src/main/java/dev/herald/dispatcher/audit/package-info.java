/**
 * The admin audit log: every admin action is recorded (actor, time, action, app, target, never a
 * secret) by {@link dev.herald.dispatcher.audit.AdminAudit} after it took effect, and read back
 * with {@code GET /v1/audit}.
 */
package dev.herald.dispatcher.audit;
