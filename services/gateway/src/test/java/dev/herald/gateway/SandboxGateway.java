package dev.herald.gateway;

import static org.awaitility.Awaitility.await;

import dev.herald.sandbox.ProviderSandbox;
import dev.herald.store.app.ApnsCredential;
import dev.herald.store.app.AppStore;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.status.MessageStatus;
import dev.herald.store.status.MessageStatusStore;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.test.context.DynamicPropertyRegistry;
import tools.jackson.databind.json.JsonMapper;

/** What the gateway's integration tests share: a gateway on the test RabbitMQ, Redis and a provider sandbox. */
public final class SandboxGateway {
    static final String CRYPTO_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

    private SandboxGateway() {
    }

    /** The gateway's servers: the test JVM's RabbitMQ and Redis, and this sandbox as FCM and APNs. */
    public static void servers(DynamicPropertyRegistry registry, java.util.function.Supplier<ProviderSandbox> sandbox) {
        registry.add("spring.rabbitmq.port", LocalRabbit.get()::port);
        registry.add("herald.redis-uri", () -> LocalRedis.get().uri());
        registry.add("herald.crypto-key", () -> CRYPTO_KEY);
        registry.add("herald.gateway.fcm.endpoint", () -> sandbox.get().fcmEndpoint().toString());
        registry.add("herald.gateway.apns.sandbox-endpoint", () -> sandbox.get().apnsEndpoint().toString());
        registry.add("herald.gateway.apns.production-endpoint", () -> sandbox.get().apnsEndpoint().toString());
        registry.add("herald.gateway.apns.trusted-certificate", () -> sandbox.get().apnsCertificate().toString());
    }

    /** A new app with the sandbox's demo FCM and APNs credentials. */
    public static String newApp(AppStore apps, ProviderSandbox sandbox, JsonMapper json) {
        String appId = "app-" + UUID.randomUUID();
        apps.create(appId, "Test").join();
        Map<String, Object> account = sandbox.demoServiceAccount();
        apps.setFcm(appId, new FcmCredential(json.writeValueAsString(account), (String) account.get("project_id"),
                (String) account.get("client_email"))).join();
        Map<String, Object> apns = sandbox.demoApns();
        apps.setApns(appId, new ApnsCredential((String) apns.get("p8"), (String) apns.get("keyId"),
                (String) apns.get("teamId"), (String) apns.get("topic"), "sandbox")).join();
        return appId;
    }

    public static Message jsonMessage(JsonMapper json, Object body) {
        MessageProperties properties = new MessageProperties();
        properties.setContentType(MessageProperties.CONTENT_TYPE_JSON);
        return new Message(json.writeValueAsBytes(body), properties);
    }

    /** The message's status once every target has an outcome (polled, up to a minute and a half). */
    public static MessageStatus awaitCompleted(MessageStatusStore status, String messageId) {
        await().atMost(Duration.ofSeconds(90)).until(() -> status.find(messageId).join()
                .map(s -> s.completedAt() != null).orElse(false));
        return status.find(messageId).join().orElseThrow();
    }
}
