package dev.herald.contract;

/** How a device is reached. */
public enum Channel { fcm, apns, mqtt }
