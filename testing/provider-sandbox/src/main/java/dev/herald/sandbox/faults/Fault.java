package dev.herald.sandbox.faults;

/** What happens to a request; each provider maps it to its own status and reason. */
public enum Fault {
    /** Accepted. */
    NONE,
    /** The token is dead: FCM 404 UNREGISTERED, APNs 410 Unregistered. */
    UNREGISTERED,
    /** The token is malformed: FCM 400 INVALID_ARGUMENT, APNs 400 BadDeviceToken. */
    BAD_TOKEN,
    /** Slow down: 429 with Retry-After. */
    TOO_MANY_REQUESTS,
    /** Try again later: 503. */
    UNAVAILABLE
}
