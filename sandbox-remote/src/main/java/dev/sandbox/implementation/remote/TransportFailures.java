package dev.sandbox.implementation.remote;

import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.ssl.NotSslRecordException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;
import reactor.netty.http.client.PrematureCloseException;

/**
 * Says in a user's words why the remote provider could not talk to its server: which URL (host and port) refused, which
 * certificate is not trusted, and what to check; never the names of the network library's classes.
 */
final class TransportFailures {
    private TransportFailures() {}

    /**
     * The message for a failure to reach the server or to talk TLS with it.
     *
     * @param baseUrl the server's URL
     * @param t the failure
     * @return the message, or {@code null} when the failure is none of the known kinds
     */
    static String describe(String baseUrl, Throwable t) {
        String at = "the sandbox server at " + baseUrl;
        if (find(t, CertPathBuilderException.class) != null || find(t, CertPathValidatorException.class) != null) {
            return at + " presented a TLS certificate that is not trusted: no authority this client trusts signed"
                    + " it. Trust the certificate of the authority that signed it, or the server's own, from a PEM"
                    + " file (trustedCertificates; in the CLI --ca-cert FILE)";
        }
        if (find(t, CertificateExpiredException.class) != null) {
            return at + " presented a TLS certificate that has expired";
        }
        CertificateException cert = find(t, CertificateException.class);
        if (cert != null && cert.getMessage() != null && cert.getMessage().startsWith("No ")) {
            return at + " presented a TLS certificate that is not issued for '" + host(baseUrl)
                    + "' (its subject alternative names list other hosts); use a URL whose host the certificate"
                    + " names";
        }
        if (find(t, NotSslRecordException.class) != null) {
            return at + " did not answer in TLS: it serves plain HTTP, so use an http:// URL";
        }
        SSLException ssl = find(t, SSLException.class);
        if (ssl != null) {
            return "the TLS handshake with " + at + " failed: " + ssl.getMessage();
        }
        if (find(t, UnknownHostException.class) != null) {
            return "could not connect to " + at + ": the host '" + host(baseUrl) + "' is unknown; check the URL";
        }
        if (find(t, ConnectTimeoutException.class) != null) {
            return "could not connect to " + at + " within the connect timeout; check the URL's host and port,"
                    + " and that no firewall drops the connection";
        }
        ConnectException connect = find(t, ConnectException.class);
        if (connect != null) {
            String why = reason(connect.getMessage());
            if (why.equalsIgnoreCase("connection refused")) {
                return "could not connect to " + at + ": the connection was refused (nothing listens on that port);"
                        + " check that the server runs (sandbox serve) and that the URL's host and port are its own";
            }
            return "could not connect to " + at + ": " + why.toLowerCase(Locale.ROOT);
        }
        PrematureCloseException closed = find(t, PrematureCloseException.class);
        if (closed != null && closed.getMessage() != null && closed.getMessage().contains("BEFORE response")) {
            return at + " closed the connection before answering"
                    + (baseUrl.startsWith("http:") ? " (if it serves TLS, use an https:// URL)" : "");
        }
        if (find(t, TimeoutException.class) != null
                || find(t, io.netty.handler.timeout.TimeoutException.class) != null) {
            return at + " did not answer within the response timeout";
        }
        return null;
    }

    /** Whether the failure is a certificate this client does not accept: retrying cannot help. */
    static boolean untrusted(Throwable t) {
        return find(t, CertificateException.class) != null
                || find(t, CertPathBuilderException.class) != null
                || find(t, CertPathValidatorException.class) != null;
    }

    /** The operating system's words at the end of a socket error, such as {@code Connection refused}. */
    private static String reason(String message) {
        if (message == null || message.isBlank()) {
            return "the connection failed";
        }
        // "finishConnect(..) failed with error(-111): Connection refused: /127.0.0.1:1" and the like
        for (String known : new String[] {"Connection refused", "No route to host", "Network is unreachable"}) {
            if (message.contains(known)) {
                return known;
            }
        }
        return message;
    }

    private static String host(String baseUrl) {
        try {
            return URI.create(baseUrl).getHost();
        } catch (IllegalArgumentException e) {
            return baseUrl;
        }
    }

    private static <T extends Throwable> T find(Throwable e, Class<T> type) {
        int depth = 0;
        for (Throwable t = e; t != null && depth < 32; t = t.getCause(), depth++) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
            for (Throwable s : t.getSuppressed()) {
                if (type.isInstance(s)) {
                    return type.cast(s);
                }
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }
}
