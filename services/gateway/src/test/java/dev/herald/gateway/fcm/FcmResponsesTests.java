package dev.herald.gateway.fcm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.gateway.delivery.ProviderResponse;
import dev.herald.gateway.delivery.ProviderResponse.Disposition;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class FcmResponsesTests {
    private final JsonMapper json = JsonMapper.builder().build();

    private static String error(int code, String status, String errorCode) {
        return """
                {"error":{"code":%d,"message":"m","status":"%s","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"%s"}]}}
                """.formatted(code, status, errorCode);
    }

    @Test
    void okIsAccepted() {
        assertThat(FcmResponses.read(200, null, "{\"name\":\"projects/p/messages/1\"}", json)).isEqualTo(ProviderResponse.ACCEPTED);
    }

    @Test
    void unregisteredMeansTheTokenIsDead() {
        assertThat(FcmResponses.read(404, null, error(404, "NOT_FOUND", "UNREGISTERED"), json))
                .isEqualTo(new ProviderResponse.Rejected("UNREGISTERED", Disposition.TOKEN_INVALID, Duration.ZERO));
    }

    @Test
    void quotaExceededIsRetriedAfterTheProvidersDelay() {
        assertThat(FcmResponses.read(429, "7", error(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED"), json))
                .isEqualTo(new ProviderResponse.Rejected("QUOTA_EXCEEDED", Disposition.THROTTLED, Duration.ofSeconds(7)));
    }

    @Test
    void unavailableIsRetriedAndInvalidArgumentIsNot() {
        assertThat(((ProviderResponse.Rejected) FcmResponses.read(503, null, error(503, "UNAVAILABLE", "UNAVAILABLE"), json)).disposition())
                .isEqualTo(Disposition.RETRY);
        assertThat(FcmResponses.read(400, null, error(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"), json))
                .isEqualTo(new ProviderResponse.Rejected("INVALID_ARGUMENT", Disposition.PERMANENT, Duration.ZERO));
    }

    @Test
    void aNonJsonErrorFromAnIntermediaryFallsBackToTheStatus() {
        assertThat(FcmResponses.read(502, "soon", "<html>bad gateway</html>", json))
                .isEqualTo(new ProviderResponse.Rejected("HTTP_502", Disposition.RETRY, Duration.ZERO));
    }
}
