package dev.herald.sandbox.fcm;

/** Why a message is invalid: Google's message text and, when there is one, the offending field. */
record Violation(String message, String field) {
}
