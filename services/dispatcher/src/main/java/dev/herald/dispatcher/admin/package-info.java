/**
 * The admin API: apps, their API keys and provider credentials. Credentials are checked before they
 * are stored (encrypted, by the registry) and never shown again: reads return only their public parts,
 * and no error or log line quotes a secret.
 */
package dev.herald.dispatcher.admin;
