package dev.herald.sandbox;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Runs the sandbox: FCM, the OAuth token endpoint, the control API and actuator on
 * {@code server.port} (9090), APNs on {@code herald.sandbox.apns-port} (9443).
 * Configuration is read from {@code provider-sandbox.yaml}, see {@link SandboxConfigName}.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class ProviderSandboxApplication {

    public static void main(String[] args) {
        SpringApplication.run(ProviderSandboxApplication.class, args);
    }
}
