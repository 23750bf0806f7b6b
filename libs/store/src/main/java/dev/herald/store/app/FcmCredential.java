package dev.herald.store.app;

import java.util.Objects;

/**
 * An FCM service account. {@code serviceAccountJson} is secret: it never leaves the process except
 * encrypted, and {@link #toString()} leaves it out so it cannot reach a log by accident.
 */
public record FcmCredential(String serviceAccountJson, String projectId, String clientEmail) {
    public FcmCredential {
        Objects.requireNonNull(serviceAccountJson, "serviceAccountJson");
        Objects.requireNonNull(projectId, "projectId");
        Objects.requireNonNull(clientEmail, "clientEmail");
    }

    @Override
    public String toString() {
        return "FcmCredential[projectId=" + projectId + ", clientEmail=" + clientEmail + ", serviceAccountJson=***]";
    }
}
