package dev.herald.sandbox.counts;

import java.util.Map;

/**
 * JSON of {@code GET /sandbox/stats}.
 *
 * @param requests       provider requests (FCM sends and APNs pushes), including rejected ones
 * @param accepted       accepted deliveries
 * @param rejected       rejections by the provider's own reason (FCM {@code UNREGISTERED},
 *                       {@code UNAUTHENTICATED}, ...; APNs {@code Unregistered}, {@code BadDeviceToken}, ...)
 * @param distinctTokens tokens with at least one accepted delivery
 * @param duplicates     accepted deliveries of a message to a token that already had it, recognised
 *                       by {@code herald_message_id} (FCM data or top level of the APNs payload)
 */
public record Stats(long requests, long accepted, Map<String, Long> rejected, long distinctTokens, long duplicates) {
}
