package dev.herald.gateway.webpush;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.store.webpush.P256;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import org.junit.jupiter.api.Test;

class WebPushEncryptionTests {
    // RFC 8291, Appendix A: the example's inputs and the body it gives.
    private static final String PLAINTEXT = "When I grow up, I want to be a watermelon";
    private static final String AS_PRIVATE = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
    private static final String AS_PUBLIC = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
    private static final String UA_PUBLIC = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
    private static final String AUTH = "BTBZMqHH6r4Tts7J_aSIgg";
    private static final String SALT = "DGv6ra1nlYgDCS1FRnbzlw";
    private static final String BODY = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";

    @Test
    void reproducesTheRfcExampleByteForByte() {
        KeyPair server = new KeyPair(P256.publicKey(P256.fromBase64url(AS_PUBLIC)), P256.privateKey(P256.fromBase64url(AS_PRIVATE)));

        byte[] body = WebPushEncryption.encrypt(PLAINTEXT.getBytes(StandardCharsets.UTF_8), P256.fromBase64url(UA_PUBLIC),
                P256.fromBase64url(AUTH), P256.fromBase64url(SALT), server);

        assertThat(P256.base64url(body)).isEqualTo(BODY);
    }

    @Test
    void eachMessageGetsItsOwnSaltAndKeySoEqualPayloadsDoNotLookEqual() {
        WebPushEncryption encryption = new WebPushEncryption();
        byte[] plaintext = PLAINTEXT.getBytes(StandardCharsets.UTF_8);

        byte[] first = encryption.encrypt(plaintext, P256.fromBase64url(UA_PUBLIC), P256.fromBase64url(AUTH));
        byte[] second = encryption.encrypt(plaintext, P256.fromBase64url(UA_PUBLIC), P256.fromBase64url(AUTH));

        assertThat(first).hasSize(plaintext.length + WebPushEncryption.OVERHEAD_BYTES).isNotEqualTo(second);
    }
}
