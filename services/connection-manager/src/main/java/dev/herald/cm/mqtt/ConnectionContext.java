package dev.herald.cm.mqtt;

import dev.herald.cm.CmMetrics;
import dev.herald.cm.CmProperties;
import dev.herald.cm.session.SessionRegistry;
import dev.herald.store.mqtt.MqttCredentials;
import dev.herald.store.mqtt.MqttOutbox;

/** What every connection shares: one reference per connection instead of six, to keep idle connections small. */
record ConnectionContext(CmProperties properties, MqttCredentials credentials, SessionRegistry sessions,
                         MqttOutbox outbox, CmMetrics metrics) {
}
