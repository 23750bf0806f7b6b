package dev.herald.dispatcher;

import dev.herald.dispatcher.schedule.ScheduleProperties;
import dev.herald.store.StoreProperties;
import dev.herald.testsupport.settings.SettingsReference;
import org.junit.jupiter.api.Test;

/** docs/settings.md lists exactly the settings this module's metadata declares. */
class SettingsReferenceTests {

    @Test
    void theSettingsReferenceIsCurrent() {
        SettingsReference.assertCurrent("dispatcher", DispatcherProperties.class, ScheduleProperties.class, dev.herald.dispatcher.audit.AuditProperties.class,
                dev.herald.dispatcher.device.WebPushEndpointProperties.class);
    }
}
