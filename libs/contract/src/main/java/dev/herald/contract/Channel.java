package dev.herald.contract;

/** How a device is reached; {@code webpush}: a browser's push service (RFC 8030). */
public enum Channel { fcm, apns, mqtt, webpush }
