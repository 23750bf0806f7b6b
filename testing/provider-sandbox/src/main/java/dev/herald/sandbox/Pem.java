package dev.herald.sandbox;

import java.util.Base64;

/** PEM text for keys and certificates, the form service-account JSON, .p8 files and trust stores use. */
public final class Pem {
    private static final Base64.Encoder ENCODER = Base64.getMimeEncoder(64, "\n".getBytes());

    private Pem() {
    }

    /** {@code type} is the label, e.g. {@code PRIVATE KEY} for PKCS#8 or {@code CERTIFICATE}. */
    public static String encode(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + ENCODER.encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
