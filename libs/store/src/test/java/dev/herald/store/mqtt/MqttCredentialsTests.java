package dev.herald.store.mqtt;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.TestRedis;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class MqttCredentialsTests {
    private final MqttCredentials credentials = new MqttCredentials(TestRedis.CRYPTO_KEY);

    @Test
    void passwordsAreBoundToAppAndDeviceAndCheckedWithoutState() {
        String password = credentials.password("shop", "car-7");
        assertThat(credentials.generation("shop", "car-7", password.getBytes())).hasValue(0);
        assertThat(credentials.generation("shop", "car-8", password.getBytes())).isEmpty();
        assertThat(credentials.generation("shop2", "car-7", password.getBytes())).isEmpty();
        assertThat(credentials.generation("shop", "car-7", null)).isEmpty();
        assertThat(new MqttCredentials("AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=").password("shop", "car-7")).isNotEqualTo(password);
    }

    @Test
    void aPasswordNamesTheGenerationItWasIssuedForAndCannotClaimAnother() {
        String second = credentials.password("shop", "car-7", 2);
        assertThat(second).startsWith("2.").isNotEqualTo(credentials.password("shop", "car-7"));
        assertThat(credentials.generation("shop", "car-7", second.getBytes())).isEqualTo(OptionalLong.of(2));
        // The generation prefix is covered by the HMAC: changing it gives no valid password.
        assertThat(credentials.generation("shop", "car-7", ("3" + second.substring(1)).getBytes())).isEmpty();
        assertThat(credentials.generation("shop", "car-7", ("x." + second.substring(2)).getBytes())).isEmpty();
        assertThat(credentials.generation("shop", "car-7", ("-2" + second.substring(1)).getBytes())).isEmpty();
    }

    @Test
    void afterAKeyRotationNewPasswordsAreIssuedAndOldOnesStillConnectUntilTheOldKeyIsRemoved() {
        String newKey = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=";
        String old = credentials.password("shop", "car-7", 2);
        MqttCredentials rotated = new MqttCredentials(newKey, java.util.List.of(TestRedis.CRYPTO_KEY));

        assertThat(rotated.password("shop", "car-7", 2)).isNotEqualTo(old).isEqualTo(new MqttCredentials(newKey).password("shop", "car-7", 2));
        assertThat(rotated.generation("shop", "car-7", old.getBytes())).hasValue(2);
        assertThat(new MqttCredentials(newKey).generation("shop", "car-7", old.getBytes())).isEmpty();
    }
}
