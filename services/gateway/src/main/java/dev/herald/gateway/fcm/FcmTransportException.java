package dev.herald.gateway.fcm;

import java.io.IOException;

/** No answer from FCM (connection refused or lost, stream reset, timeout): a transport failure, retried. */
final class FcmTransportException extends IOException {
    FcmTransportException(String message) {
        super(message);
    }

    FcmTransportException(String message, Throwable cause) {
        super(message, cause);
    }
}
