package dev.sandbox.implementation.egress;

import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * The TLS the egress proxy opens itself, to destinations of rules that add headers: the JDK's default trust, and the
 * policy's own certificates besides it. Host names are checked by the socket ({@code HTTPS} endpoint
 * identification). Internal: not part of the public API.
 */
final class UpstreamTls {
    private static volatile X509TrustManager jdk;
    private static volatile List<X509Certificate> lastExtra = List.of();
    private static volatile SSLContext last;

    private UpstreamTls() {}

    /**
     * A context trusting the JDK's authorities and these certificates; the last one made is kept.
     *
     * @param extra the policy's certificates
     * @return the context
     */
    static SSLContext context(List<X509Certificate> extra) {
        SSLContext c = last;
        if (c != null && lastExtra.equals(extra)) {
            return c;
        }
        try {
            List<X509TrustManager> managers = new ArrayList<>();
            managers.add(jdk());
            if (!extra.isEmpty()) {
                KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
                ks.load(null, null);
                for (int i = 0; i < extra.size(); i++) {
                    ks.setCertificateEntry("policy-" + i, extra.get(i));
                }
                managers.add(x509(ks));
            }
            SSLContext made = SSLContext.getInstance("TLS");
            made.init(null, new TrustManager[] {new AnyOf(managers)}, null);
            lastExtra = List.copyOf(extra);
            last = made;
            return made;
        } catch (GeneralSecurityException | java.io.IOException e) {
            throw new IllegalStateException("cannot make the egress proxy's TLS context: " + e, e);
        }
    }

    private static X509TrustManager jdk() throws GeneralSecurityException {
        X509TrustManager j = jdk;
        if (j == null) {
            j = x509(null);
            jdk = j;
        }
        return j;
    }

    private static X509TrustManager x509(KeyStore ks) throws GeneralSecurityException {
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init(ks);
        for (TrustManager m : f.getTrustManagers()) {
            if (m instanceof X509TrustManager x) {
                return x;
            }
        }
        throw new GeneralSecurityException("no X.509 trust manager");
    }

    /** Trusts a server that any of its managers trusts; never a client (the proxy is not a server here). */
    private record AnyOf(List<X509TrustManager> managers) implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("the egress proxy does not take client certificates");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            CertificateException first = null;
            for (X509TrustManager m : managers) {
                try {
                    m.checkServerTrusted(chain, authType);
                    return;
                } catch (CertificateException e) {
                    if (first == null) {
                        first = e;
                    }
                }
            }
            throw first != null ? first : new CertificateException("no trust manager");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            List<X509Certificate> all = new ArrayList<>();
            for (X509TrustManager m : managers) {
                all.addAll(List.of(m.getAcceptedIssuers()));
            }
            return all.toArray(X509Certificate[]::new);
        }
    }
}
