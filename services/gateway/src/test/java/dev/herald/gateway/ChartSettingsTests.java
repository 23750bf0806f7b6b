package dev.herald.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.StoreProperties;
import dev.herald.testsupport.settings.ChartConfig;
import dev.herald.testsupport.settings.Repository;
import dev.herald.testsupport.settings.Setting;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** charts/gateway sets only what differs from the defaults, and documents the defaults the metadata has. */
class ChartSettingsTests {

    @Test
    void theChartAgreesWithTheSettingsMetadata() {
        ChartConfig.assertAgrees("gateway", GatewayProperties.class, StoreProperties.class);
    }

    /**
     * KEDA's target per replica is derived from what one replica holds with the default consumers and
     * prefetch; the chart's comment spells the sum out, so it must follow the defaults.
     */
    @Test
    void kedasTargetPerReplicaFollowsTheDefaultConsumersAndPrefetch() throws IOException {
        String values = Files.readString(Repository.root().resolve("charts/gateway/values.yaml"));
        Matcher held = Pattern.compile("\\((\\d+) \\+ (\\d+) \\+ (\\d+)\\) x (\\d+) = (\\d+) with the default config").matcher(values);
        assertThat(held.find()).as("charts/gateway/values.yaml explains keda.messagesPerReplica").isTrue();
        List<Setting> settings = Setting.of(GatewayProperties.class);
        int high = defaultOf(settings, "herald.gateway.consumers.high");
        int normal = defaultOf(settings, "herald.gateway.consumers.normal");
        int audience = defaultOf(settings, "herald.gateway.consumers.audience");
        int prefetch = defaultOf(settings, "herald.gateway.prefetch");
        assertThat(List.of(held.group(1), held.group(2), held.group(3), held.group(4), held.group(5)))
                .as("consumers high + normal + audience, prefetch, batches held per replica")
                .containsExactly(String.valueOf(high), String.valueOf(normal), String.valueOf(audience),
                        String.valueOf(prefetch), String.valueOf((high + normal + audience) * prefetch));
    }

    private static int defaultOf(List<Setting> settings, String name) {
        return Integer.parseInt(settings.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow().defaultValue());
    }
}
