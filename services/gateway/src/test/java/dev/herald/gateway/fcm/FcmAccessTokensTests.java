package dev.herald.gateway.fcm;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.herald.store.app.App;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.app.FcmTokenHosts;
import java.security.KeyPairGenerator;
import java.time.Clock;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class FcmAccessTokensTests {
    private final FcmAccessTokens tokens = new FcmAccessTokens(Clock.systemUTC(),
            FcmTokenHosts.of(List.of("oauth2.googleapis.com", "127.0.0.1")));

    private static FcmCredential serviceAccount(String tokenUri) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        String pem = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(generator.generateKeyPair().getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
        String json = JsonMapper.builder().build().writeValueAsString(Map.of(
                "type", "service_account", "project_id", "p", "private_key_id", "k1", "private_key", pem,
                "client_email", "svc@p.iam.gserviceaccount.com", "client_id", "1", "token_uri", tokenUri));
        return new FcmCredential(json, "p", "svc@p.iam.gserviceaccount.com");
    }

    private static App app(FcmCredential credential) {
        return new App("shop", "Shop", Instant.EPOCH, 1, List.of(), Optional.of(credential), Optional.empty());
    }

    @Test
    void refusesATokenUriOutsideTheAllowedHosts() throws Exception {
        FcmCredential credential = serviceAccount("http://10.1.2.3/token");
        assertThatThrownBy(() -> tokens.token(app(credential), credential))
                .isInstanceOf(FcmCredentialException.class)
                .hasMessageContaining("10.1.2.3").hasMessageContaining("herald.fcm-token-hosts");
    }

    @Test
    void acceptsAnAllowedHostWithoutContactingItYet() throws Exception {
        FcmCredential credential = serviceAccount("https://oauth2.googleapis.com/token");
        // Building the token Mono does no I/O (subscribing would); it must not refuse the host.
        tokens.token(app(credential), credential);
    }

    @Test
    void aMalformedServiceAccountIsACredentialProblemNotACrash() {
        FcmCredential credential = new FcmCredential("{\"type\":\"service_account\"}", "p", "e");
        assertThatThrownBy(() -> tokens.token(app(credential), credential)).isInstanceOf(FcmCredentialException.class);
    }
}
