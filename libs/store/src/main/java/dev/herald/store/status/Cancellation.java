package dev.herald.store.status;

import java.util.Arrays;

/** What a cancel did: the return codes of message_cancel in herald.lua. */
public enum Cancellation {
    /** Marked now; the gateways end what they have not sent yet as cancelled. */
    MARKED(1),
    /** It was cancelled before: nothing changed (a repeated cancel is not an error). */
    ALREADY_CANCELLED(2),
    /** Every target already had an outcome: there is nothing left to cancel. */
    FINISHED(3),
    /** No such message of this app (or its status expired). */
    NOT_FOUND(4),
    /** Only scheduled, nothing queued yet: every target ended cancelled at once, the message is complete. */
    ENDED(5);

    private final long code;

    Cancellation(long code) {
        this.code = code;
    }

    static Cancellation of(long code) {
        return Arrays.stream(values()).filter(c -> c.code == code).findFirst()
                .orElseThrow(() -> new IllegalStateException("unknown cancel code " + code));
    }
}
