/**
 * The Dispatcher: Herald's HTTP API. Packages by feature: {@code admin} (apps, keys, credentials),
 * {@code device} (registration and topics), {@code send} (accepting messages), {@code status}
 * (message status and app statistics), {@code auth} (admin token and API keys), {@code problem}
 * (RFC 9457 errors) and {@code queue} (RabbitMQ topology and confirmed publishing).
 */
package dev.herald.dispatcher;
