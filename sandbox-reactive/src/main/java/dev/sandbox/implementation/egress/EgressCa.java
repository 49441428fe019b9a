package dev.sandbox.implementation.egress;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.jspecify.annotations.Nullable;

/**
 * A session's own certificate authority, for the egress proxy's credential rules: an EC P-256 key made on the host
 * that never leaves it (nor does the hosts' RSA key), its certificate (the only part the sandbox gets, to trust), and a server certificate per host
 * it signs on demand (a bounded cache of TLS contexts). Certificates are made with BouncyCastle's {@code bcpkix}; the
 * TLS is the JDK's. Internal: not part of the public API.
 */
final class EgressCa {
    /** Hosts whose TLS context is kept. */
    static final int CACHED_HOSTS = 64;

    /** How long the authority's certificate is valid: longer than a session lives, by design of the lifetimes. */
    static final Duration CA_VALIDITY = Duration.ofDays(30);

    /** How long a host's certificate is valid. */
    static final Duration HOST_VALIDITY = Duration.ofDays(2);

    private static final SecureRandom RANDOM = new SecureRandom();

    private final KeyPair caKeys;
    private final X509Certificate caCert;
    private volatile @Nullable KeyPair hostKeys; // made on first use
    private final Map<String, SSLContext> contexts = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, SSLContext> eldest) {
            return size() > CACHED_HOSTS;
        }
    }; // guarded by itself

    private EgressCa(KeyPair caKeys, X509Certificate caCert) {
        this.caKeys = caKeys;
        this.caCert = caCert;
    }

    /**
     * Whether BouncyCastle's certificate builder is on the class path.
     *
     * @return whether an authority can be made
     */
    static boolean available() {
        try {
            Class.forName("org.bouncycastle.cert.X509v3CertificateBuilder", false, EgressCa.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * Makes an authority.
     *
     * @param what the session, in the certificate's name
     * @return the authority
     */
    static EgressCa create(String what) {
        try {
            KeyPair ca = keys();
            Instant now = Instant.now();
            X500Name name = new X500Name(
                    "CN=dev.sandbox egress proxy (" + what.replaceAll("[^A-Za-z0-9 ._-]", "") + "),O=dev.sandbox");
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(
                            name,
                            serial(),
                            Date.from(now.minus(Duration.ofMinutes(5))),
                            Date.from(now.plus(CA_VALIDITY)),
                            name,
                            ca.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                    .addExtension(
                            Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(ca.getPublic()));
            X509Certificate cert = sign(b, ca);
            return new EgressCa(ca, cert);
        } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make the egress proxy's certificate authority: " + e, e);
        }
    }

    /**
     * The authority's certificate, PEM-encoded: what the sandbox is told to trust.
     *
     * @return the PEM text
     */
    String pem() {
        try {
            String b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                    .encodeToString(caCert.getEncoded());
            return "-----BEGIN CERTIFICATE-----\n" + b64 + "\n-----END CERTIFICATE-----\n";
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot encode the egress proxy's certificate", e);
        }
    }

    /**
     * The authority's certificate.
     *
     * @return the certificate
     */
    X509Certificate certificate() {
        return caCert;
    }

    /**
     * A server-side TLS context presenting a certificate for the host, signed by this authority.
     *
     * @param host the host name the sandbox asked for
     * @return the context
     */
    SSLContext serverContext(String host) {
        synchronized (contexts) {
            SSLContext c = contexts.get(host);
            if (c != null) {
                return c;
            }
        }
        SSLContext made = make(host);
        synchronized (contexts) {
            contexts.put(host, made);
        }
        return made;
    }

    private SSLContext make(String host) {
        try {
            KeyPair hostKeys = hostKeys();
            Instant now = Instant.now();
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(
                            caCert,
                            serial(),
                            Date.from(now.minus(Duration.ofMinutes(5))),
                            Date.from(now.plus(HOST_VALIDITY)),
                            new X500Name("CN=" + host),
                            hostKeys.getPublic())
                    .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                    .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
                    .addExtension(
                            Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth))
                    .addExtension(
                            Extension.subjectAlternativeName,
                            false,
                            new GeneralNames(new GeneralName(GeneralName.dNSName, host)))
                    .addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(caCert));
            X509Certificate leaf = sign(b, caKeys);
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            char[] none = new char[0];
            ks.setKeyEntry("host", hostKeys.getPrivate(), none, new X509Certificate[] {leaf, caCert});
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, none);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (GeneralSecurityException | IOException | OperatorCreationException e) {
            throw new IllegalStateException("cannot make a certificate for " + host + ": " + e, e);
        }
    }

    /**
     * The key of the hosts' certificates: RSA, which every TLS client takes (busybox's own TLS, for one, takes no EC
     * certificate), made once per authority on first use; the authority's own key is EC, fast to make at every start.
     */
    private KeyPair hostKeys() throws GeneralSecurityException {
        KeyPair k = hostKeys;
        if (k == null) {
            synchronized (this) {
                k = hostKeys;
                if (k == null) {
                    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
                    g.initialize(2048, RANDOM);
                    k = g.generateKeyPair();
                    hostKeys = k;
                }
            }
        }
        return k;
    }

    private static KeyPair keys() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
    }

    private static BigInteger serial() {
        return new BigInteger(64, RANDOM).add(BigInteger.ONE);
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer)
            throws OperatorCreationException, GeneralSecurityException {
        return new JcaX509CertificateConverter()
                .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    }
}
