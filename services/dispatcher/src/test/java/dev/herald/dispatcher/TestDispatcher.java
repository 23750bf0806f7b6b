package dev.herald.dispatcher;

import dev.herald.dispatcher.schedule.Scheduler;
import dev.herald.testsupport.LocalRabbit;
import dev.herald.testsupport.LocalRedis;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

/**
 * One dispatcher process of a test that needs several, or restarts them: its own application
 * context on a free port, with the test's clock as its {@code Clock} bean.
 */
final class TestDispatcher implements AutoCloseable {
    private final ConfigurableApplicationContext context;

    private TestDispatcher(ConfigurableApplicationContext context) {
        this.context = context;
    }

    static TestDispatcher start(Clock clock, LocalRedis redis, LocalRabbit rabbit, String... arguments) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.rabbitmq.host=" + rabbit.host(),
                "--spring.rabbitmq.port=" + rabbit.port(), "--herald.redis-uri=" + redis.uri(),
                "--herald.crypto-key=" + DispatcherIntegrationTest.CRYPTO_KEY,
                "--herald.dispatcher.admin-token=" + DispatcherIntegrationTest.ADMIN_TOKEN));
        args.addAll(List.of(arguments));
        ConfigurableApplicationContext context = new SpringApplicationBuilder(DispatcherApplication.class)
                .initializers(ctx -> ctx.getBeanFactory().registerSingleton("testClock", clock))
                .run(args.toArray(String[]::new));
        return new TestDispatcher(context);
    }

    Api api() {
        return new Api(Integer.parseInt(context.getEnvironment().getRequiredProperty("local.server.port")));
    }

    Scheduler scheduler() {
        return context.getBean(Scheduler.class);
    }

    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    DispatcherIntegrationTest.TestApp createApp() {
        return DispatcherIntegrationTest.createApp(api());
    }

    /** The messages of these sends now on a queue, as JSON (the others are drained with them). */
    List<JsonNode> messagesOf(String queue, List<String> messageIds) {
        RabbitTemplate rabbit = bean(RabbitTemplate.class);
        List<JsonNode> found = new ArrayList<>();
        for (Message message = rabbit.receive(queue); message != null; message = rabbit.receive(queue)) {
            JsonNode json = Api.JSON.readTree(message.getBody());
            if (messageIds.contains(json.path("messageId").asString())) {
                found.add(json);
            }
        }
        return found;
    }

    @Override
    public void close() {
        context.close();
    }
}
