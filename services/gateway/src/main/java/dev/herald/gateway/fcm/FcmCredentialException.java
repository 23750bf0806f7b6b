package dev.herald.gateway.fcm;

/**
 * An app's FCM service account cannot be used: malformed, or its {@code token_uri} points at a host
 * the gateway does not send signed assertions to. Retrying cannot help; the app's owner must fix it.
 */
public final class FcmCredentialException extends RuntimeException {
    public FcmCredentialException(String message, Throwable cause) {
        super(message, cause);
    }
}
