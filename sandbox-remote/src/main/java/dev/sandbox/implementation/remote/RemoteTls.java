package dev.sandbox.implementation.remote;

import dev.sandbox.InvalidArgumentException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;

/**
 * The remote provider's TLS: whom an {@code https} client trusts. Built once, when the provider is built, so that no
 * certificate file nor trust store is read on an event loop.
 */
public final class RemoteTls {
    /** A PEM file larger than this holds no certificates a client should trust. */
    private static final long MAX_PEM_BYTES = 1024 * 1024;

    private RemoteTls() {}

    /**
     * The client context: trusts the certificates of {@code trusted} (certificate authorities or the server's own),
     * or, when {@code null}, those of the JVM's trust store ({@code javax.net.ssl.trustStore}, else the JDK's {@code
     * cacerts}). The server's certificate must also name the host of the URL.
     *
     * @param trusted a PEM (or DER) file of one or more X.509 certificates, or {@code null}
     * @return the context
     * @throws InvalidArgumentException naming {@code trustedCertificates} when the file cannot be read or holds no
     *     certificate
     */
    public static SslContext clientContext(Path trusted) {
        SslContextBuilder builder = SslContextBuilder.forClient();
        if (trusted != null) {
            builder.trustManager(certificates(trusted).toArray(X509Certificate[]::new));
        }
        try {
            return builder.build();
        } catch (IOException e) {
            throw new InvalidArgumentException(
                    "trustedCertificates", "cannot set up TLS with the trusted certificates: " + e.getMessage());
        }
    }

    /** The X.509 certificates of a PEM or DER file. */
    private static Collection<X509Certificate> certificates(Path file) {
        String field = "trustedCertificates";
        try {
            if (Files.size(file) > MAX_PEM_BYTES) {
                throw new InvalidArgumentException(
                        field, "trustedCertificates '" + file + "' is larger than " + MAX_PEM_BYTES + " bytes");
            }
            Collection<X509Certificate> certs;
            try (InputStream in = Files.newInputStream(file)) {
                certs = CertificateFactory.getInstance("X.509").generateCertificates(in).stream()
                        .map(X509Certificate.class::cast)
                        .toList();
            }
            if (certs.isEmpty()) {
                throw new InvalidArgumentException(
                        field, "trustedCertificates '" + file + "' holds no certificate (expected PEM blocks)");
            }
            return certs;
        } catch (NoSuchFileException e) {
            throw new InvalidArgumentException(field, "trustedCertificates '" + file + "' was not found");
        } catch (java.nio.file.AccessDeniedException e) {
            throw new InvalidArgumentException(
                    field, "cannot read trustedCertificates '" + file + "': permission denied");
        } catch (IOException e) {
            throw new InvalidArgumentException(
                    field, "cannot read trustedCertificates '" + file + "': " + e.getMessage());
        } catch (GeneralSecurityException e) {
            throw new InvalidArgumentException(
                    field,
                    "trustedCertificates '" + file + "' holds no readable certificate (expected PEM blocks"
                            + " '-----BEGIN CERTIFICATE-----'): " + e.getMessage());
        }
    }
}
