/** Device registration and topic membership of an app, stored by the registry's {@code DeviceRegistry}. */
package dev.herald.dispatcher.device;
