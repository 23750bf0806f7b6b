package dev.herald.sandbox.faults;

/**
 * The fault chosen for one attempt.
 *
 * @param retryAfterSeconds meaningful for {@link Fault#TOO_MANY_REQUESTS} only
 */
public record Decision(Fault fault, long retryAfterSeconds) {
    static final Decision ACCEPT = new Decision(Fault.NONE, 0);
    static final Decision UNREGISTERED = new Decision(Fault.UNREGISTERED, 0);
    static final Decision BAD_TOKEN = new Decision(Fault.BAD_TOKEN, 0);
    static final Decision UNAVAILABLE = new Decision(Fault.UNAVAILABLE, 0);
    /** The deterministic {@code throttled<N>-} prefix always asks for one second. */
    static final Decision THROTTLED = new Decision(Fault.TOO_MANY_REQUESTS, 1);

    public boolean accepted() {
        return fault == Fault.NONE;
    }
}
