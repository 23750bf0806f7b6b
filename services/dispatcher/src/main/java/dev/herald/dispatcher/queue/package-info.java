/**
 * RabbitMQ: the topology (declared from {@link dev.herald.contract.QueueTopology}, identical to the
 * gateway's) and a publisher that reports success only once the broker has confirmed and routed
 * every message.
 */
package dev.herald.dispatcher.queue;
