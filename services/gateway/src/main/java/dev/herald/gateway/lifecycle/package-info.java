/**
 * The token lifecycle: the sweep that removes devices whose token went unrefreshed too long (one
 * replica at a time, under a Redis lease) and its metrics. Stale devices are left out of fan-outs
 * by the store's DeviceRegistry; cancel lives on the send path (delivery, audience).
 */
package dev.herald.gateway.lifecycle;
