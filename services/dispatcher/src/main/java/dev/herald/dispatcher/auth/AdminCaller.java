package dev.herald.dispatcher.auth;

/**
 * Who made an admin request, as the audit log records it. The admin token is one shared secret, so
 * the actor is {@code admin:} plus a fingerprint of the token that was presented (it tells entries
 * made before and after a token rotation apart and reveals nothing of the token), and the request's
 * address: the peer as the dispatcher sees it and {@code X-Forwarded-For} exactly as sent (a proxy's
 * claim, not checked; at most 200 characters).
 */
public record AdminCaller(String actor, String address, String forwardedFor) {
    /** The request attribute holding it, set by the authentication of an admin request. */
    public static final String ATTRIBUTE = AdminCaller.class.getName();
}
