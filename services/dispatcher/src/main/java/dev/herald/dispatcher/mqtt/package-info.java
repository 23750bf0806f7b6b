/**
 * Admin actions on MQTT devices' credentials: revoking one device's password. The connection
 * manager checks the device's credential generation at every CONNECT, and this package tells the
 * node holding a connected device to close it.
 */
package dev.herald.dispatcher.mqtt;
