/**
 * What arrived: per token accepted deliveries by provider and attempts, totals by outcome, and
 * duplicate deliveries of a message to a token, kept in lock-free counters; plus the Prometheus
 * metrics of the same events.
 */
package dev.herald.sandbox.counts;
