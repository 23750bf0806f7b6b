/**
 * Per-app API rate limits: every app request takes a token from the app's bucket in Redis, shared by
 * all dispatcher replicas; an app out of tokens is answered 429 problem+json with Retry-After.
 */
package dev.herald.dispatcher.ratelimit;
