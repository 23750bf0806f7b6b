/**
 * Fault injection shared by both providers: a latency added to every provider answer, random
 * rejection rates, and deterministic token prefixes ({@code unregistered-}, {@code bad-},
 * {@code throttled<N>-}, {@code flaky<N>-}) so a test can script exactly what a token experiences.
 */
package dev.herald.sandbox.faults;
