/**
 * Provider quotas and message throttles on the delivery path: before a batch is sent, its targets
 * take tokens from buckets in Redis that every replica shares (the app's bucket per provider, with
 * the provider's 429 pause; the message's own bucket when it is throttled). What gets no token now
 * is parked: republished to a queue that hands it back after a fixed delay, so an app at its quota
 * holds no consumer and no prefetch slot that another app's work could use.
 */
package dev.herald.gateway.quota;
