/** Cancelling a message: the mark the send path reads, through the store's {@code MessageCancels}. */
package dev.herald.dispatcher.cancel;
