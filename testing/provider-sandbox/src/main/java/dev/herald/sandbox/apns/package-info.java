/**
 * The APNs provider API (HTTP/2 over TLS with ALPN h2) on its own port, faithful enough for
 * Pushy's {@code ApnsClient} with token authentication: the headers it checks, the rejection
 * reasons and statuses Apple documents, and the {@code apns-id} echo. The TLS certificate is
 * self-signed at startup and published so clients can trust it.
 */
package dev.herald.sandbox.apns;
