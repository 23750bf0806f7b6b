package dev.herald.dispatcher.admin;

import dev.herald.dispatcher.problem.Problems;
import dev.herald.store.app.ApnsCredential;
import dev.herald.store.app.FcmCredential;
import dev.herald.store.app.FcmTokenHosts;
import java.net.URI;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.interfaces.ECPrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Checks provider credentials before they are stored, so a typo shows up as a 400 now rather than
 * as failed deliveries later. Messages name the field and the expected form, never its content.
 */
final class CredentialChecks {
    private static final Pattern APPLE_ID = Pattern.compile("[A-Za-z0-9]{10}");
    private static final String BEGIN = "-----BEGIN PRIVATE KEY-----";
    private static final String END = "-----END PRIVATE KEY-----";

    private CredentialChecks() {
    }

    static FcmCredential fcm(JsonNode serviceAccount, FcmTokenHosts tokenHosts, JsonMapper json) {
        if (serviceAccount == null || serviceAccount.isNull() || serviceAccount.isMissingNode()) {
            throw Problems.invalidField("serviceAccount", "is required: the service account key file's JSON object");
        }
        if (!serviceAccount.isObject()) {
            throw Problems.invalidField("serviceAccount", "must be a JSON object (the service account key file's content)");
        }
        List<Problems.FieldError> errors = new ArrayList<>();
        if (!"service_account".equals(text(serviceAccount, "type").orElse(null))) {
            errors.add(new Problems.FieldError("serviceAccount.type", "must be \"service_account\""));
        }
        Optional<String> projectId = text(serviceAccount, "project_id").filter(v -> !v.isBlank() && v.length() <= 128);
        if (projectId.isEmpty()) {
            errors.add(new Problems.FieldError("serviceAccount.project_id", "is required: a string of 1 to 128 characters"));
        }
        Optional<String> clientEmail = text(serviceAccount, "client_email").filter(v -> v.contains("@") && v.length() <= 320);
        if (clientEmail.isEmpty()) {
            errors.add(new Problems.FieldError("serviceAccount.client_email", "is required: an email address"));
        }
        Optional<String> privateKey = text(serviceAccount, "private_key");
        if (privateKey.isEmpty() || parse(privateKey.get(), "RSA").isEmpty()) {
            errors.add(new Problems.FieldError("serviceAccount.private_key",
                    "must be an RSA private key in PKCS#8 PEM form (" + BEGIN + " ... " + END + ")"));
        }
        Optional<String> tokenUri = text(serviceAccount, "token_uri").filter(CredentialChecks::httpUri);
        if (tokenUri.isEmpty()) {
            errors.add(new Problems.FieldError("serviceAccount.token_uri", "is required: an absolute http(s) URL"));
        } else if (!tokenHosts.allows(URI.create(tokenUri.get()))) {
            // The gateway would refuse to use it; said now rather than as failed deliveries later.
            errors.add(new Problems.FieldError("serviceAccount.token_uri", "must name a host in " + tokenHosts));
        }
        if (!errors.isEmpty()) {
            throw Problems.invalid(errors);
        }
        return new FcmCredential(json.writeValueAsString(serviceAccount), projectId.get(), clientEmail.get());
    }

    static ApnsCredential apns(String p8, String keyId, String teamId, String topic, String environment) {
        List<Problems.FieldError> errors = new ArrayList<>();
        Optional<PrivateKey> key = p8 == null ? Optional.empty() : parse(p8, "EC");
        if (key.isEmpty() || !(key.get() instanceof ECPrivateKey ec) || ec.getParams().getCurve().getField().getFieldSize() != 256) {
            errors.add(new Problems.FieldError("p8", "must be the .p8 file's content: a P-256 EC private key in PKCS#8 PEM form ("
                    + BEGIN + " ... " + END + ")"));
        }
        if (keyId == null || !APPLE_ID.matcher(keyId).matches()) {
            errors.add(new Problems.FieldError("keyId", "must be the 10-character key id from Apple"));
        }
        if (teamId == null || !APPLE_ID.matcher(teamId).matches()) {
            errors.add(new Problems.FieldError("teamId", "must be the 10-character team id from Apple"));
        }
        if (topic == null || topic.isBlank() || topic.length() > 255) {
            errors.add(new Problems.FieldError("topic", "is required: the app's bundle id, 1 to 255 characters"));
        }
        if (!"sandbox".equals(environment) && !"production".equals(environment)) {
            errors.add(new Problems.FieldError("environment", "must be one of [sandbox, production]"));
        }
        if (!errors.isEmpty()) {
            throw Problems.invalid(errors);
        }
        return new ApnsCredential(p8.strip() + "\n", keyId, teamId, topic, environment);
    }

    private static Optional<String> text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && value.isString() ? Optional.of(value.asString()) : Optional.empty();
    }

    private static boolean httpUri(String value) {
        try {
            URI uri = new URI(value);
            return uri.isAbsolute() && uri.getHost() != null
                    && ("https".equalsIgnoreCase(uri.getScheme()) || "http".equalsIgnoreCase(uri.getScheme()));
        } catch (Exception e) {
            return false;
        }
    }

    /** The private key in a PKCS#8 PEM block, if it is one of {@code algorithm}; nothing about a failure is kept. */
    static Optional<PrivateKey> parse(String pem, String algorithm) {
        String text = pem.strip();
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        if (begin != 0 || end < 0 || end + END.length() != text.length()) {
            return Optional.empty();
        }
        try {
            byte[] der = Base64.getMimeDecoder().decode(text.substring(BEGIN.length(), end).replaceAll("\\s", ""));
            return Optional.of(KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der)));
        } catch (GeneralSecurityException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
