/**
 * The contract between the Dispatcher and the Gateway: what is on the queues and what they are called.
 * Kept free of Spring so any consumer can read it.
 */
package dev.herald.contract;
