package dev.herald.store.status;

import java.util.Arrays;

/** What recording one target's outcome did: the return codes of outcome_record and outcome_settle in herald.lua. */
public enum Recording {
    /** Already recorded for this target (by this batch, or settled before): nothing counted. */
    ALREADY_RECORDED(0),
    /** Counted now, for the first time. */
    RECORDED(1),
    /** The same target came in another batch of the message: not counted, the total shrank once. */
    DUPLICATE_TARGET(2),
    /** A "skip": the target had no outcome yet, and none was recorded. */
    NOT_RECORDED(3),
    /** The message's status record is gone (expired or discarded): nothing recreated. */
    STATUS_GONE(4);

    private final long code;

    Recording(long code) {
        this.code = code;
    }

    static Recording of(Long code) {
        return Arrays.stream(values()).filter(r -> r.code == code).findFirst()
                .orElseThrow(() -> new IllegalStateException("unknown recording code " + code));
    }
}
