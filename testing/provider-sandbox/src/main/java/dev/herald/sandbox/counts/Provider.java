package dev.herald.sandbox.counts;

/** The mocked providers; lower case because the names are metric tags and JSON keys. */
public enum Provider {
    fcm, apns, webpush
}
