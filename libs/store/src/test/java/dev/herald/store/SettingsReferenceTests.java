package dev.herald.store;

import dev.herald.testsupport.settings.SettingsReference;
import org.junit.jupiter.api.Test;

/** docs/settings.md lists exactly the settings this module's metadata declares. */
class SettingsReferenceTests {

    @Test
    void theSettingsReferenceIsCurrent() {
        SettingsReference.assertCurrent("store", StoreProperties.class);
    }
}
