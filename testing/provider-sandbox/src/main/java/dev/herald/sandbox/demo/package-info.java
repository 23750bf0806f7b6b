/**
 * Demo credentials generated at startup: a Google service account (RSA key, {@code token_uri}
 * pointing at the sandbox) and an APNs .p8 signing key, so the platform can be configured without
 * real provider accounts.
 */
package dev.herald.sandbox.demo;
