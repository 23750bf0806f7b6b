package dev.herald.dispatcher;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.contract.Queues;
import dev.herald.testsupport.MetricsScrape;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ActuatorTests extends DispatcherIntegrationTest {

    @Test
    void readinessIncludesRabbitAndRedisAndIsUp() {
        Api.Response readiness = api().get("/actuator/health/readiness", null);
        assertThat(readiness.status()).as(readiness.toString()).isEqualTo(200);
        assertThat(readiness.json().get("status").asString()).isEqualTo("UP");
        assertThat(api().get("/actuator/health/liveness", null).status()).isEqualTo(200);
    }

    @Test
    void theSendMetricsArePublishedForPrometheus() {
        TestApp app = createApp();
        api().json("POST", "/v1/apps/" + app.id() + "/messages", app.key(),
                Map.of("to", Map.of("tokens", java.util.List.of(Map.of("channel", "fcm", "token", "t"))), "title", "x"));
        drain(Queues.SEND_NORMAL);

        String metrics = api().get("/actuator/prometheus", null).body();
        MetricsScrape.write("dispatcher", metrics); // for the dashboard/alert metric-name check of the charts

        assertThat(metrics).contains("herald_dispatcher_accepted_total{kind=\"tokens\",priority=\"normal\"");
        assertThat(metrics).contains("herald_dispatcher_published_total{queue=\"herald.send.normal\"");
        assertThat(metrics).contains("herald_dispatcher_publish_failures_total{reason=\"nack\"");
        assertThat(metrics).contains("herald_dispatcher_publish_latency_seconds_bucket");
        assertThat(metrics).contains("herald_dispatcher_idempotent_replays_total");
    }
}
