package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

class DispatcherPropertiesTests {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(DispatcherProperties.class)
    static class Properties {
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Properties.class);

    @Test
    void aMissingAdminTokenFailsStartupWithAReadableMessage() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("herald.dispatcher.admin-token is not set")
                    .hasMessageContaining("HERALD_DISPATCHER_ADMIN_TOKEN");
        });
        runner.withPropertyValues("herald.dispatcher.admin-token=   ").run(context -> assertThat(context).hasFailed());
    }

    @Test
    void defaultsAreTheDocumentedOnes() {
        runner.withPropertyValues("herald.dispatcher.admin-token=0123456789abcdef0123").run(context -> {
            DispatcherProperties properties = context.getBean(DispatcherProperties.class);
            assertThat(properties.maxPayloadBytes()).isEqualTo(4096);
            assertThat(properties.maxTargetsPerRequest()).isEqualTo(1000);
            assertThat(properties.idempotencyTtl()).isEqualTo(Duration.ofHours(24));
            assertThat(properties.defaultTtl()).isEqualTo(Duration.ofDays(28));
            assertThat(properties.maxTtl()).isEqualTo(Duration.ofDays(28));
            assertThat(properties.publishTimeout()).isEqualTo(Duration.ofSeconds(5));
            assertThat(properties.batchSize()).isEqualTo(500);
            assertThat(properties.maxRequestSize()).isEqualTo(DataSize.ofKilobytes(256));
            assertThat(properties.toString()).doesNotContain("0123456789abcdef0123");
        });
    }

    @Test
    void aDefaultTtlAboveTheMaximumIsRefused() {
        assertThatIllegalStateException().isThrownBy(() -> new DispatcherProperties("0123456789abcdef0123", 4096, 1000,
                        DataSize.ofKilobytes(256), Duration.ofHours(24), Duration.ofDays(30), Duration.ofDays(28),
                        Duration.ofSeconds(5), 500, 100, 10_000, true))
                .withMessageContaining("default-ttl");
    }
}
