package dev.herald.sandbox.apns;

/**
 * What the sandbox answers one push: 200 when {@code reason} is null, else the reason's status
 * and {@code {"reason": ...}}, plus {@code "timestamp"} (epoch milliseconds) for 410.
 */
record ApnsAnswer(String apnsId, ApnsReason reason, long timestamp) {

    static ApnsAnswer accepted(String apnsId) {
        return new ApnsAnswer(apnsId, null, 0);
    }

    static ApnsAnswer rejected(String apnsId, ApnsReason reason) {
        return new ApnsAnswer(apnsId, reason, reason == ApnsReason.Unregistered ? System.currentTimeMillis() : 0);
    }

    int status() {
        return reason == null ? 200 : reason.status;
    }

    String outcome() {
        return reason == null ? "accepted" : reason.name();
    }

    String body() {
        if (reason == null) {
            return "";
        }
        return reason == ApnsReason.Unregistered
                ? "{\"reason\":\"" + reason.name() + "\",\"timestamp\":" + timestamp + "}"
                : "{\"reason\":\"" + reason.name() + "\"}";
    }
}
