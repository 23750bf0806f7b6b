package dev.herald.sandbox.demo;

import dev.herald.sandbox.Pem;
import java.net.URI;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.stereotype.Component;

/**
 * The sandbox's demo identities, new at every start: an RSA 2048 service-account key (the token
 * endpoint verifies assertions signed with it) and an EC P-256 APNs signing key. Only demo
 * material: nothing here unlocks a real provider.
 */
@Component
public class DemoCredentials {
    public static final String PROJECT_ID = "herald-sandbox";
    public static final String CLIENT_EMAIL = "herald-sandbox@herald-sandbox.iam.gserviceaccount.com";
    /** Apple key and team ids are exactly 10 alphanumerics, and the dispatcher checks that. */
    public static final String APNS_KEY_ID = "SANDBOXKEY";
    public static final String APNS_TEAM_ID = "SANDBOXTM1";
    public static final String APNS_TOPIC = "dev.herald.demo";

    private final KeyPair serviceAccountKey;
    private final String privateKeyId;
    private final String clientId;
    private final String apnsP8;

    public DemoCredentials() {
        try {
            KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
            rsa.initialize(2048);
            this.serviceAccountKey = rsa.generateKeyPair();
            KeyPairGenerator ec = KeyPairGenerator.getInstance("EC");
            ec.initialize(new ECGenParameterSpec("secp256r1"));
            this.apnsP8 = Pem.encode("PRIVATE KEY", ec.generateKeyPair().getPrivate().getEncoded());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot generate the sandbox demo keys", e);
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        // Google's shapes: a 40-hex-digit key id and a 21-digit numeric client id.
        byte[] keyId = new byte[20];
        random.nextBytes(keyId);
        this.privateKeyId = HexFormat.of().formatHex(keyId);
        this.clientId = "1" + String.format("%020d", random.nextLong(0, Long.MAX_VALUE));
    }

    /** The key id (JWT {@code kid}) of assertions signed with the demo service account. */
    public String privateKeyId() {
        return privateKeyId;
    }

    public RSAPublicKey serviceAccountPublicKey() {
        return (RSAPublicKey) serviceAccountKey.getPublic();
    }

    /** A service-account JSON object as the Google Cloud console downloads it. */
    public Map<String, Object> serviceAccount(URI tokenUri) {
        Map<String, Object> account = new LinkedHashMap<>();
        account.put("type", "service_account");
        account.put("project_id", PROJECT_ID);
        account.put("private_key_id", privateKeyId);
        account.put("private_key", Pem.encode("PRIVATE KEY", serviceAccountKey.getPrivate().getEncoded()));
        account.put("client_email", CLIENT_EMAIL);
        account.put("client_id", clientId);
        account.put("auth_uri", "https://accounts.google.com/o/oauth2/auth");
        account.put("token_uri", tokenUri.toString());
        account.put("auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs");
        account.put("client_x509_cert_url",
                "https://www.googleapis.com/robot/v1/metadata/x509/herald-sandbox%40herald-sandbox.iam.gserviceaccount.com");
        account.put("universe_domain", "googleapis.com");
        return account;
    }

    /** APNs token-auth credentials in the shape of the dispatcher's {@code PUT .../credentials/apns}. */
    public Map<String, Object> apns() {
        Map<String, Object> apns = new LinkedHashMap<>();
        apns.put("p8", apnsP8);
        apns.put("keyId", APNS_KEY_ID);
        apns.put("teamId", APNS_TEAM_ID);
        apns.put("topic", APNS_TOPIC);
        apns.put("environment", "sandbox");
        return apns;
    }
}
