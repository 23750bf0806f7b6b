/**
 * Google's OAuth 2.0 token endpoint for service accounts (JWT bearer grant), as
 * google-auth-library's {@code ServiceAccountCredentials} calls it when a service account's
 * {@code token_uri} points at the sandbox; and the access tokens FCM requests must carry.
 */
package dev.herald.sandbox.oauth;
