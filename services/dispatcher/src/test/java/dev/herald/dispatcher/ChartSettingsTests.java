package dev.herald.dispatcher;

import dev.herald.dispatcher.schedule.ScheduleProperties;
import dev.herald.store.StoreProperties;
import dev.herald.testsupport.settings.ChartConfig;
import org.junit.jupiter.api.Test;

/** charts/dispatcher sets only what differs from the defaults, and documents the defaults the metadata has. */
class ChartSettingsTests {

    @Test
    void theChartAgreesWithTheSettingsMetadata() {
        ChartConfig.assertAgrees("dispatcher", DispatcherProperties.class, ScheduleProperties.class, StoreProperties.class,
                dev.herald.dispatcher.audit.AuditProperties.class,
                dev.herald.dispatcher.device.WebPushEndpointProperties.class);
    }
}
