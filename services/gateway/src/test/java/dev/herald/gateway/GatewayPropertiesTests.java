package dev.herald.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.StoreProperties;

import java.net.URI;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * The gateway's settings as a start from the jar sees them (application.yaml, plus
 * application-sandbox.yaml when the profile is on): a bare start talks to the real providers, and
 * only the {@code sandbox} profile points it at the provider sandbox on this machine.
 */
class GatewayPropertiesTests {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties({GatewayProperties.class, StoreProperties.class})
    static class SettingsOnly {
    }

    private static GatewayProperties settings(String... profiles) {
        return settings(GatewayProperties.class, profiles);
    }

    private static <T> T settings(Class<T> type, String... profiles) {
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(SettingsOnly.class)
                .web(WebApplicationType.NONE).profiles(profiles).run("--spring.main.banner-mode=off")) {
            return context.getBean(type);
        }
    }

    @Test
    void aBareStartTalksToTheRealProviders() {
        GatewayProperties properties = settings();
        assertThat(properties.fcm().endpoint()).isEqualTo(URI.create("https://fcm.googleapis.com"));
        assertThat(settings(StoreProperties.class).fcmTokenHosts()).containsExactly("oauth2.googleapis.com");
        assertThat(properties.apns().sandboxEndpoint()).isEqualTo(URI.create("https://api.sandbox.push.apple.com:443"));
        assertThat(properties.apns().productionEndpoint()).isEqualTo(URI.create("https://api.push.apple.com:443"));
        assertThat(properties.apns().trustedCertificate()).as("the JDK's roots, i.e. Apple's").isNull();
    }

    @Test
    void theSandboxProfileTalksToTheProviderSandboxOnThisMachine() {
        GatewayProperties properties = settings("sandbox");
        assertThat(properties.fcm().endpoint()).isEqualTo(URI.create("http://127.0.0.1:9090"));
        assertThat(settings(StoreProperties.class, "sandbox").fcmTokenHosts()).contains("127.0.0.1", "localhost");
        assertThat(properties.apns().sandboxEndpoint()).isEqualTo(URI.create("https://127.0.0.1:9443"));
        assertThat(properties.apns().productionEndpoint()).isEqualTo(URI.create("https://127.0.0.1:9443"));
        assertThat(properties.apns().trustedCertificate())
                .isEqualTo(Path.of(System.getProperty("java.io.tmpdir"), "herald-sandbox-apns.pem"));
    }
}
