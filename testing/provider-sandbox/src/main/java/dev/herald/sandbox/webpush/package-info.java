/**
 * A Web Push service (RFC 8030) as a browser's push service would be: it issues test
 * subscriptions with keys of its own, checks each push's VAPID JWT (RFC 8292: signature, aud, exp,
 * sub), decrypts the payload (RFC 8291) and counts it, or answers with an injected fault. The
 * cryptography is BouncyCastle's, not the JDK classes the gateway uses, so a mistake the two made
 * alike would still have to match RFC 8291's example (both are tested against it).
 */
package dev.herald.sandbox.webpush;
