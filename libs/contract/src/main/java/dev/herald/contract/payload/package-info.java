/**
 * What each provider receives for a message: the FCM v1 request body, the APNs payload and the
 * JSON an MQTT device gets. One owner for both the gateway, which sends them, and the dispatcher,
 * which previews them without sending.
 */
package dev.herald.contract.payload;
