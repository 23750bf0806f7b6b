/**
 * The {@code /sandbox} control API on the FCM port: delivery counts, runtime fault settings, the
 * demo credentials and the APNs certificate, for tests, benchmarks and local setup.
 */
package dev.herald.sandbox.control;
