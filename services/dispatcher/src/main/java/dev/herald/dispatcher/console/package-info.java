/**
 * The Herald console: its static pages (built from {@code console/} by Vite into
 * {@code static/console/}, served with a strict Content-Security-Policy) and the read-only API calls
 * it needs beyond the rest of {@code /v1}: an app's recent messages, its counts over time, a device
 * found by its token, and the platform's queues and MQTT nodes for the admin.
 */
package dev.herald.dispatcher.console;
