package dev.herald.store.crypto;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

class CredentialCipherTests {
    private static final String PLAINTEXT = "{\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkq\"}";

    private final String key = randomKey();
    private final CredentialCipher cipher = new CredentialCipher(key);

    @Test
    void decryptsWhatItEncryptedForTheSameApp() {
        String sealed = cipher.encrypt(PLAINTEXT, "app-1");

        assertThat(sealed).doesNotContain("PRIVATE KEY");
        assertThat(cipher.decrypt(sealed, "app-1")).isEqualTo(PLAINTEXT);
    }

    @Test
    void decryptsWithAnotherInstanceHoldingTheSameKey() {
        String sealed = cipher.encrypt(PLAINTEXT, "app-1");

        assertThat(new CredentialCipher(key).decrypt(sealed, "app-1")).isEqualTo(PLAINTEXT);
    }

    @Test
    void encryptingTheSameValueTwiceGivesDifferentCiphertexts() {
        assertThat(cipher.encrypt(PLAINTEXT, "app-1")).isNotEqualTo(cipher.encrypt(PLAINTEXT, "app-1"));
    }

    @Test
    void ciphertextOfOneAppDoesNotDecryptForAnother() {
        String sealed = cipher.encrypt(PLAINTEXT, "app-1");

        assertThatThrownBy(() -> cipher.decrypt(sealed, "app-2"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be decrypted");
    }

    @Test
    void wrongKeyFailsWithoutRevealingPlaintextOrKeys() {
        String otherKey = randomKey();
        String sealed = cipher.encrypt(PLAINTEXT, "app-1");

        Throwable failure = catchThrowable(() -> new CredentialCipher(otherKey).decrypt(sealed, "app-1"));

        assertThat(failure).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("herald.crypto-key");
        String everything = stackTrace(failure);
        assertThat(everything).doesNotContain(PLAINTEXT, "PRIVATE KEY", key, otherKey, sealed);
    }

    @Test
    void garbageCiphertextFailsWithTheSameReadableError() {
        assertThatThrownBy(() -> cipher.decrypt("not-base64-at-all!", "app-1"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be decrypted");
        assertThatThrownBy(() -> cipher.decrypt("AAAA", "app-1"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be decrypted");
    }

    @Test
    void missingKeyIsRejectedWithInstructions() {
        assertThatThrownBy(() -> new CredentialCipher(null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("herald.crypto-key is not set");
        assertThatThrownBy(() -> new CredentialCipher("  "))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("herald.crypto-key is not set")
                .hasMessageContaining("32 random bytes");
    }

    @Test
    void keyThatIsNotBase64IsRejected() {
        assertThatThrownBy(() -> new CredentialCipher("this is not base64 %%%"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("herald.crypto-key is not valid base64");
    }

    @Test
    void keyOfTheWrongLengthIsRejectedWithItsLength() {
        String sixteenBytes = Base64.getEncoder().encodeToString(new byte[16]);

        assertThatThrownBy(() -> new CredentialCipher(sixteenBytes))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("herald.crypto-key must decode to 32 bytes, got 16");
    }

    @Test
    void aNewKeyEncryptsWhileThePreviousOneStillDecrypts() {
        String newKey = randomKey();
        String sealedWithOld = cipher.encrypt(PLAINTEXT, "app-1");
        CredentialCipher rotated = new CredentialCipher(newKey, List.of(key));

        String sealedWithNew = rotated.encrypt(PLAINTEXT, "app-1");

        assertThat(rotated.decrypt(sealedWithOld, "app-1")).isEqualTo(PLAINTEXT);
        assertThat(rotated.decrypt(sealedWithNew, "app-1")).isEqualTo(PLAINTEXT);
        assertThat(sealedWithNew).startsWith(rotated.currentKeyId() + ":");
        assertThat(rotated.isCurrent(sealedWithNew)).isTrue();
        assertThat(rotated.isCurrent(sealedWithOld)).isFalse();
        assertThat(rotated.currentKeyId()).isNotEqualTo(cipher.currentKeyId()).doesNotContain(newKey, key);
        assertThat(new CredentialCipher(newKey).decrypt(rotated.reencrypt(sealedWithOld, "app-1"), "app-1")).isEqualTo(PLAINTEXT);
    }

    /** Stored before key ids: the same bytes without the {@code <key id>:} prefix. */
    @Test
    void aCiphertextWithoutKeyIdStillDecryptsWithTheCurrentOrAPreviousKey() {
        String unlabelled = cipher.encrypt(PLAINTEXT, "app-1").substring(cipher.currentKeyId().length() + 1);

        assertThat(cipher.decrypt(unlabelled, "app-1")).isEqualTo(PLAINTEXT);
        assertThat(new CredentialCipher(randomKey(), List.of(key)).decrypt(unlabelled, "app-1")).isEqualTo(PLAINTEXT);
        assertThat(cipher.isCurrent(unlabelled)).isFalse();
    }

    @Test
    void aRemovedKeyIsNamedByItsIdOnly() {
        String sealed = cipher.encrypt(PLAINTEXT, "app-1");

        Throwable failure = catchThrowable(() -> new CredentialCipher(randomKey()).decrypt(sealed, "app-1"));

        assertThat(failure).isInstanceOf(CredentialKeyException.class)
                .hasMessageContaining("encrypted with key " + cipher.currentKeyId())
                .hasMessageContaining("herald.crypto-previous-keys");
        assertThat(stackTrace(failure)).doesNotContain(PLAINTEXT, key, sealed.substring(9));
    }

    @Test
    void aPreviousKeyThatIsNotAKeyIsRejected() {
        assertThatThrownBy(() -> new CredentialCipher(key, List.of("short")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("herald.crypto-previous-keys");
    }

    private static String randomKey() {
        byte[] raw = new byte[32];
        new SecureRandom().nextBytes(raw);
        return Base64.getEncoder().encodeToString(raw);
    }

    private static String stackTrace(Throwable failure) {
        StringWriter out = new StringWriter();
        failure.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
