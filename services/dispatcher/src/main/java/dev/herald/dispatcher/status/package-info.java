/** What became of a message, and an app's delivery totals, read from the registry's {@code MessageStatusStore}. */
package dev.herald.dispatcher.status;
