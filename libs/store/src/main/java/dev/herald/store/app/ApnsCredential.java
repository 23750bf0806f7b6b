package dev.herald.store.app;

import java.util.Objects;

/**
 * An APNs token-auth signing key (.p8) with its identifiers. {@code p8} is secret and left out of
 * {@link #toString()}.
 *
 * @param environment {@code sandbox} or {@code production}: which APNs host the gateway uses
 */
public record ApnsCredential(String p8, String keyId, String teamId, String topic, String environment) {
    public ApnsCredential {
        Objects.requireNonNull(p8, "p8");
        Objects.requireNonNull(keyId, "keyId");
        Objects.requireNonNull(teamId, "teamId");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(environment, "environment");
    }

    public boolean production() {
        return "production".equals(environment);
    }

    @Override
    public String toString() {
        return "ApnsCredential[keyId=" + keyId + ", teamId=" + teamId + ", topic=" + topic
                + ", environment=" + environment + ", p8=***]";
    }
}
