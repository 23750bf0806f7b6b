package dev.herald.store.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ApiKeysTests {

    @Test
    void issuedKeyHasTheDocumentedShapeAndMatchesItsApp() {
        ApiKeys.Issued issued = ApiKeys.issue();

        assertThat(issued.key()).matches("hk_[0-9a-f]{8}_[A-Za-z0-9_-]{43}");
        assertThat(ApiKeys.keyIdOf(issued.key())).contains(issued.keyId());
        assertThat(ApiKeys.matches(appWith(issued), issued.key())).isTrue();
    }

    @Test
    void issuedKeysAreUnique() {
        ApiKeys.Issued first = ApiKeys.issue();
        ApiKeys.Issued second = ApiKeys.issue();

        assertThat(second.key()).isNotEqualTo(first.key());
        assertThat(second.sha256()).isNotEqualTo(first.sha256());
    }

    @Test
    void anotherKeyOfTheSameShapeDoesNotMatch() {
        ApiKeys.Issued issued = ApiKeys.issue();
        App app = appWith(issued);
        String secret = issued.key().substring(12);
        String sameIdOtherSecret = "hk_" + issued.keyId() + "_" + new StringBuilder(secret).reverse();

        assertThat(ApiKeys.matches(app, ApiKeys.issue().key())).isFalse();
        assertThat(ApiKeys.matches(app, sameIdOtherSecret)).isFalse();
        assertThat(ApiKeys.matches(app, issued.key() + "x")).isFalse();
    }

    @Test
    void malformedKeysAreRejected() {
        ApiKeys.Issued issued = ApiKeys.issue();
        App app = appWith(issued);
        String secret = issued.key().substring(12);
        List<String> malformed = java.util.Arrays.asList(
                null,
                "",
                "hk_",
                "hk_" + issued.keyId(),
                "HK_" + issued.key().substring(3),
                "xx_" + issued.key().substring(3),
                "hk_" + issued.keyId().substring(1) + "_" + secret,
                "hk_" + issued.keyId() + "0_" + secret,
                "hk_" + issued.keyId() + "_" + secret + "x".repeat(60));

        for (String key : malformed) {
            assertThat(ApiKeys.keyIdOf(key)).as("key id of %s", key).isEmpty();
            assertThat(ApiKeys.matches(app, key)).as("matches %s", key).isFalse();
        }
    }

    @Test
    void issuedToStringHidesTheKey() {
        ApiKeys.Issued issued = ApiKeys.issue();
        String secret = issued.key().substring(12);

        assertThat(issued.toString()).contains(issued.keyId()).doesNotContain(issued.key()).doesNotContain(secret);
    }

    private static App appWith(ApiKeys.Issued issued) {
        return new App("app-1", "App", Instant.now(), 1,
                List.of(new ApiKey(issued.keyId(), issued.sha256(), Instant.now())), Optional.empty(), Optional.empty());
    }
}
