/**
 * FCM HTTP v1 {@code messages:send}: bearer-token check against the sandbox's own token endpoint,
 * FCM's validation rules and its error JSON ({@code google.rpc.Status} with {@code FcmError}
 * details), then the token's fault and the injected latency. Served as h2c and HTTP/1.1.
 */
package dev.herald.sandbox.fcm;
