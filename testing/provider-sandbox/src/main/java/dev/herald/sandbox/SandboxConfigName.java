package dev.herald.sandbox;

import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Makes the sandbox read {@code provider-sandbox.yaml} instead of {@code application.yaml}.
 * <p>
 * Why: other modules start the sandbox in-process from their tests, and there
 * {@code classpath:application.yaml} is the host's own file (its ports, health groups, ...),
 * which would break the sandbox. Only applications built from {@link ProviderSandboxApplication}
 * are touched, and an explicit {@code spring.config.name} still wins (lowest precedence source).
 */
public final class SandboxConfigName implements EnvironmentPostProcessor, Ordered {
    static final String CONFIG_NAME = "provider-sandbox";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (application.getAllSources().contains(ProviderSandboxApplication.class)
                || application.getMainApplicationClass() == ProviderSandboxApplication.class) {
            environment.getPropertySources().addLast(new MapPropertySource("herald-sandbox-config-name",
                    Map.of("spring.config.name", CONFIG_NAME)));
        }
    }

    /** Before {@code ConfigDataEnvironmentPostProcessor}, which is the one that reads the name. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
