package dev.herald.sandbox.webpush;

import static org.assertj.core.api.Assertions.assertThat;

import dev.herald.sandbox.ProviderSandbox;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.crypto.digests.SHA256Digest;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.crypto.signers.ECDSASigner;
import org.bouncycastle.util.BigIntegers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The sandbox's Web Push service: what it decrypts, and which pushes it refuses. */
class WebPushServiceTests {
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64D = Base64.getUrlDecoder();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static ProviderSandbox sandbox;

    @BeforeAll
    static void start() {
        sandbox = ProviderSandbox.start();
    }

    @AfterAll
    static void stop() {
        sandbox.close();
    }

    @Test
    void decryptsTheRfc8291Example() throws Exception {
        // RFC 8291, Appendix A: the user agent's keys and the body the example sends.
        ECPrivateKeyParameters browser = new ECPrivateKeyParameters(
                new BigInteger(1, B64D.decode("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94")), P256Keys.DOMAIN);
        SubscriptionKeys keys = new SubscriptionKeys(browser,
                B64D.decode("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
                B64D.decode("BTBZMqHH6r4Tts7J_aSIgg"));
        byte[] body = B64D.decode("DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN");

        assertThat(new String(PayloadDecryption.decrypt(body, keys), StandardCharsets.UTF_8))
                .isEqualTo("When I grow up, I want to be a watermelon");
        body[body.length - 1] ^= 1;
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> PayloadDecryption.decrypt(body, keys))
                .isInstanceOf(PayloadDecryption.Undecryptable.class);
    }

    @Test
    void aCorrectlySignedPushIsAcceptedAndCountedForItsSubscription() throws Exception {
        AsymmetricCipherKeyPair vapid = P256Keys.generate();
        TestSubscriptions.Subscription subscription = issue("ok-" + System.nanoTime());

        HttpResponse<String> answer = push(subscription.endpoint(), authorization(vapid, vapid, sandbox.webPush().origin(), 3600));

        assertThat(answer.statusCode()).isEqualTo(201);
        assertThat(answer.headers().firstValue("location")).isPresent();
        assertThat(sandbox.counts().received(subscription.name()).webpush()).isEqualTo(1);
    }

    @Test
    void aSignatureByAnotherKeyThanTheOneNamedIsRefused() throws Exception {
        TestSubscriptions.Subscription subscription = issue("forged-" + System.nanoTime());

        HttpResponse<String> answer = push(subscription.endpoint(),
                authorization(P256Keys.generate(), P256Keys.generate(), sandbox.webPush().origin(), 3600));

        assertThat(answer.statusCode()).isEqualTo(401);
        assertThat(sandbox.counts().stats().rejected()).containsKey("VAPID_SIGNATURE");
        assertThat(sandbox.counts().received(subscription.name()).webpush()).isZero();
    }

    @Test
    void theAudienceExpiryAndKeyOfTheSubscriptionAreChecked() throws Exception {
        AsymmetricCipherKeyPair vapid = P256Keys.generate();
        String origin = sandbox.webPush().origin();
        TestSubscriptions.Subscription subscription = issue("claims-" + System.nanoTime());

        assertThat(push(subscription.endpoint(), authorization(vapid, vapid, "https://elsewhere.example", 3600)).statusCode()).isEqualTo(401);
        assertThat(push(subscription.endpoint(), authorization(vapid, vapid, origin, -10)).statusCode()).isEqualTo(401);
        assertThat(push(subscription.endpoint(), authorization(vapid, vapid, origin, 25 * 3600)).statusCode()).isEqualTo(401);
        assertThat(push(subscription.endpoint(), null).statusCode()).isEqualTo(401);

        String appKey = B64.encodeToString(P256Keys.encode((ECPublicKeyParameters) P256Keys.generate().getPublic()));
        TestSubscriptions.Subscription bound = sandbox.webPush().issue(List.of("bound-" + System.nanoTime()), appKey).getFirst();
        assertThat(push(bound.endpoint(), authorization(vapid, vapid, origin, 3600)).statusCode()).isEqualTo(403);
        assertThat(sandbox.counts().received(subscription.name()).webpush()).isZero();
    }

    @Test
    void scriptedNamesAndUnknownSubscriptionsGetThePushServicesAnswers() throws Exception {
        AsymmetricCipherKeyPair vapid = P256Keys.generate();
        String origin = sandbox.webPush().origin();
        String authorization = authorization(vapid, vapid, origin, 3600);

        assertThat(push(issue("unregistered-" + System.nanoTime()).endpoint(), authorization).statusCode()).isEqualTo(410);
        assertThat(push(issue("bad-" + System.nanoTime()).endpoint(), authorization).statusCode()).isEqualTo(404);
        HttpResponse<String> throttled = push(issue("throttled1-" + System.nanoTime()).endpoint(), authorization);
        assertThat(throttled.statusCode()).isEqualTo(429);
        assertThat(throttled.headers().firstValue("retry-after")).contains("1");
        assertThat(push(issue("flaky1-" + System.nanoTime()).endpoint(), authorization).statusCode()).isEqualTo(503);
        assertThat(push(origin + "/webpush/never-issued", authorization).statusCode()).isEqualTo(404);
    }

    @Test
    void aSubscriptionIsIssuedOverTheControlApiInPushSubscriptionShape() throws Exception {
        HttpResponse<String> issued = HTTP.send(HttpRequest.newBuilder(URI.create(sandbox.fcmEndpoint() + "/sandbox/webpush/subscriptions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"names\":[\"api-1\",\"api-2\"]}")).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(issued.statusCode()).isEqualTo(200);
        assertThat(issued.body()).contains("\"endpoint\":\"" + sandbox.webPush().origin() + "/webpush/api-1\"").contains("\"p256dh\"", "\"auth\"");
        HttpResponse<String> refused = HTTP.send(HttpRequest.newBuilder(URI.create(sandbox.fcmEndpoint() + "/sandbox/webpush/subscriptions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"names\":[\"no spaces\"]}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(400);
    }

    private static TestSubscriptions.Subscription issue(String name) {
        return sandbox.webPush().issue(List.of(name), null).getFirst();
    }

    /** {@code vapid t=..., k=...} naming {@code named}'s public key, signed by {@code signer}. */
    private static String authorization(AsymmetricCipherKeyPair signer, AsymmetricCipherKeyPair named, String audience,
                                        long expiresInSeconds) {
        String header = B64.encodeToString("{\"typ\":\"JWT\",\"alg\":\"ES256\"}".getBytes(StandardCharsets.UTF_8));
        String claims = B64.encodeToString(("{\"aud\":\"" + audience + "\",\"exp\":" + (Instant.now().getEpochSecond() + expiresInSeconds)
                + ",\"sub\":\"mailto:test@herald.invalid\"}").getBytes(StandardCharsets.UTF_8));
        String input = header + "." + claims;
        byte[] digest = new byte[32];
        SHA256Digest sha256 = new SHA256Digest();
        sha256.update(input.getBytes(StandardCharsets.US_ASCII), 0, input.length());
        sha256.doFinal(digest, 0);
        ECDSASigner ecdsa = new ECDSASigner();
        ecdsa.init(true, signer.getPrivate());
        BigInteger[] rs = ecdsa.generateSignature(digest);
        byte[] signature = new byte[64];
        System.arraycopy(BigIntegers.asUnsignedByteArray(32, rs[0]), 0, signature, 0, 32);
        System.arraycopy(BigIntegers.asUnsignedByteArray(32, rs[1]), 0, signature, 32, 32);
        return "vapid t=" + input + "." + B64.encodeToString(signature) + ", k="
                + B64.encodeToString(P256Keys.encode((ECPublicKeyParameters) named.getPublic()));
    }

    /** A push without payload (RFC 8030 allows it), so no encryption is needed here. */
    private static HttpResponse<String> push(String endpoint, String authorization) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint)).timeout(Duration.ofSeconds(20))
                .header("TTL", "60").POST(HttpRequest.BodyPublishers.noBody());
        if (authorization != null) {
            request.header("Authorization", authorization);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
