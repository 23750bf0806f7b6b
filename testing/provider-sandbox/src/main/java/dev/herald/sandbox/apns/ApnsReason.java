package dev.herald.sandbox.apns;

/** The rejection reasons the sandbox gives, with Apple's status for each. */
enum ApnsReason {
    BadCollapseId(400),
    BadDeviceToken(400),
    BadExpirationDate(400),
    BadMessageId(400),
    BadPriority(400),
    InvalidPushType(400),
    MissingDeviceToken(400),
    MissingTopic(400),
    PayloadEmpty(400),
    /** Not one of Apple's strings (Apple documents none for malformed JSON); the sandbox's own. */
    BadPayload(400),
    ExpiredProviderToken(403),
    InvalidProviderToken(403),
    MissingProviderToken(403),
    BadPath(404),
    MethodNotAllowed(405),
    Unregistered(410),
    PayloadTooLarge(413),
    TooManyRequests(429),
    ServiceUnavailable(503);

    final int status;

    ApnsReason(int status) {
        this.status = status;
    }
}
