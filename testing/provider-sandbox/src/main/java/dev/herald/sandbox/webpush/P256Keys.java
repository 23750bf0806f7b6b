package dev.herald.sandbox.webpush;

import java.math.BigInteger;
import java.security.SecureRandom;
import org.bouncycastle.asn1.x9.ECNamedCurveTable;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.crypto.AsymmetricCipherKeyPair;
import org.bouncycastle.crypto.agreement.ECDHBasicAgreement;
import org.bouncycastle.crypto.generators.ECKeyPairGenerator;
import org.bouncycastle.crypto.params.ECDomainParameters;
import org.bouncycastle.crypto.params.ECKeyGenerationParameters;
import org.bouncycastle.crypto.params.ECPrivateKeyParameters;
import org.bouncycastle.crypto.params.ECPublicKeyParameters;
import org.bouncycastle.util.BigIntegers;

/** P-256 with BouncyCastle's lightweight API: key pairs, points from bytes, ECDH. */
final class P256Keys {
    static final ECDomainParameters DOMAIN = domain();
    private static final SecureRandom RANDOM = new SecureRandom();

    private P256Keys() {
    }

    private static ECDomainParameters domain() {
        X9ECParameters curve = ECNamedCurveTable.getByName("secp256r1");
        return new ECDomainParameters(curve.getCurve(), curve.getG(), curve.getN(), curve.getH());
    }

    static AsymmetricCipherKeyPair generate() {
        ECKeyPairGenerator generator = new ECKeyPairGenerator();
        generator.init(new ECKeyGenerationParameters(DOMAIN, RANDOM));
        return generator.generateKeyPair();
    }

    static byte[] encode(ECPublicKeyParameters key) {
        return key.getQ().getEncoded(false);
    }

    /** @throws IllegalArgumentException when the bytes are not a point of P-256 */
    static ECPublicKeyParameters point(byte[] encoded) {
        return new ECPublicKeyParameters(DOMAIN.getCurve().decodePoint(encoded).normalize(), DOMAIN);
    }

    static byte[] sharedSecret(ECPrivateKeyParameters own, ECPublicKeyParameters other) {
        ECDHBasicAgreement agreement = new ECDHBasicAgreement();
        agreement.init(own);
        BigInteger z = agreement.calculateAgreement(other);
        return BigIntegers.asUnsignedByteArray(agreement.getFieldSize(), z);
    }
}
