package dev.herald.sandbox.counts;

/**
 * JSON of {@code GET /sandbox/received?token=T}.
 *
 * @param fcm      accepted FCM deliveries
 * @param apns     accepted APNs deliveries
 * @param webpush  accepted Web Push deliveries (the token is the subscription's name)
 * @param attempts authenticated requests naming the token, whatever their outcome
 */
public record TokenCounts(String token, long fcm, long apns, long webpush, long attempts) {
}
