package dev.herald.store.mqtt;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import org.junit.jupiter.api.Test;

class MqttCredentialsTests {
    @Test
    void passwordsAreBoundToAppAndDeviceAndCheckedWithoutState() {
        MqttCredentials credentials = new MqttCredentials(TestRedis.CRYPTO_KEY);
        String password = credentials.password("shop", "car-7");
        assertThat(credentials.matches("shop", "car-7", password.getBytes())).isTrue();
        assertThat(credentials.matches("shop", "car-8", password.getBytes())).isFalse();
        assertThat(credentials.matches("shop2", "car-7", password.getBytes())).isFalse();
        assertThat(credentials.matches("shop", "car-7", null)).isFalse();
        assertThat(new MqttCredentials("AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").password("shop", "car-7")).isNotEqualTo(password);
    }
}
