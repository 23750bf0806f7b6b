/**
 * Accepting a message: validate, claim the idempotency key, record it as accepted, publish it
 * (token batches to the send queue of its priority, topic and device sends as one audience job)
 * and answer 202 once RabbitMQ confirmed every part. Audiences are expanded behind the queue by the
 * gateway, never inside the request.
 */
package dev.herald.dispatcher.send;
