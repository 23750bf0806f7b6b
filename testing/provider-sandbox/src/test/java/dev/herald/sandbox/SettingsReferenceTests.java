package dev.herald.sandbox;

import dev.herald.sandbox.faults.Faults;
import dev.herald.testsupport.settings.SettingsReference;
import org.junit.jupiter.api.Test;

/** docs/settings.md lists exactly the settings this module's metadata declares. */
class SettingsReferenceTests {

    @Test
    void theSettingsReferenceIsCurrent() {
        SettingsReference.assertCurrent("provider-sandbox", SandboxProperties.class, Faults.class, dev.herald.sandbox.webpush.WebPushProperties.class);
    }
}
