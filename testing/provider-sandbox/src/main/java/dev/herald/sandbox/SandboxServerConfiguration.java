package dev.herald.sandbox;

import java.time.Duration;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/** The event loops both ports run on, and how the FCM port writes its answers. */
@Configuration(proxyBeanMethods = false)
class SandboxServerConfiguration {

    /**
     * The sandbox's own event loops instead of Reactor Netty's global ones (Boot's default).
     * Why: tests of other modules start the sandbox inside their JVM, and stopping it must not
     * dispose the global loops that the host's own HTTP clients are using.
     */
    @Bean
    ReactorResourceFactory reactorResourceFactory() {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        factory.setUseGlobalResources(false);
        factory.setLoopResourcesSupplier(() -> LoopResources.create("sandbox-http"));
        factory.setShutdownQuietPeriod(Duration.ofMillis(100)); // a stopped sandbox should not hold a test for 2 s
        factory.setShutdownTimeout(Duration.ofSeconds(5));
        return factory;
    }

    /** The FCM port (Boot's server) writes as the APNs port does: {@link ConnectionFlushes}. */
    @Bean
    NettyServerCustomizer consolidatedFlushes() {
        return ConnectionFlushes::consolidated;
    }
}
