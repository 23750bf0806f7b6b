/**
 * The provider sandbox: a runnable mock of FCM HTTP v1 (with Google's OAuth token endpoint) and the
 * APNs provider API, with latency and error injection and exact delivery counts. The platform
 * talks to it by default, so it runs without real credentials; tests and benchmarks read its
 * counts to assert what arrived. {@link dev.herald.sandbox.ProviderSandbox} starts one in-process.
 */
package dev.herald.sandbox;
