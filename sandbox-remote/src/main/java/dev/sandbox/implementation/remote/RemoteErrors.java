package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxException;
import dev.sandbox.implementation.wire.ErrorBodies;
import dev.sandbox.implementation.wire.WireJson;
import java.io.IOException;
import java.util.concurrent.TimeoutException;
import reactor.netty.channel.AbortedException;

/**
 * The one place where the remote provider turns what went wrong into SDK exceptions, and where it is decided whether
 * retrying can help ({@link SandboxException#isRetryable()}): error answers of the server (an HTTP status and the
 * JSON error object, rebuilt into its SDK type by {@link ErrorBodies#exception}), failures to reach it, and answers that
 * break the protocol.
 *
 * <p>The server says whether an error is retryable in the error object's {@code retryable} field (see {@code
 * sandbox-server/README.md}); an answer without one (a proxy's error page, an older server) is judged by its status:
 *
 * <table>
 *   <caption>What is retryable</caption>
 *   <tr><th>failure</th><th>exception</th><th>retryable</th></tr>
 *   <tr><td>the server cannot be reached, does not answer in time, or the connection breaks</td>
 *       <td>{@code BackendException}</td><td>yes</td></tr>
 *   <tr><td>the server's TLS certificate is not trusted or does not name the host</td>
 *       <td>{@code BackendException}</td><td>no</td></tr>
 *   <tr><td>a stream that dropped and could not be resumed</td><td>{@code BackendException}</td><td>yes</td></tr>
 *   <tr><td>an error object with {@code "retryable": true}, or without the field and HTTP 408, 429, 502, 503,
 *       504</td><td>its own type ({@code BackendException} for the server's own errors such as {@code
 *       TooManyExecs} and {@code ShuttingDown})</td><td>yes</td></tr>
 *   <tr><td>{@code SandboxTimeoutException} (504)</td><td>{@code SandboxTimeoutException}</td><td>always</td></tr>
 *   <tr><td>{@code SessionNotFoundException}, {@code InvalidArgumentException}, {@code FileOperationException},
 *       {@code SessionClosedException} and the other typed errors</td><td>their own type</td><td>never</td></tr>
 *   <tr><td>an answer the protocol does not allow (no body where one is due, not JSON)</td>
 *       <td>{@code BackendException}</td><td>no</td></tr>
 *   <tr><td>any call after the provider was closed</td><td>{@code ProviderClosedException}</td><td>no</td></tr>
 * </table>
 */
public final class RemoteErrors {
    private RemoteErrors() {}

    /**
     * Whether an HTTP status says the server, or a proxy before it, was overloaded or away for a moment: 408, 429,
     * 502, 503, 504.
     *
     * @param status the status
     * @return {@code true} when the same request may succeed later
     */
    public static boolean retryableStatus(int status) {
        return ErrorBodies.retryableStatus(status);
    }

    /**
     * Whether an error answer is retryable: the error object's {@code retryable} field when the server sent one,
     * else its status.
     *
     * @param error the {@code error} object, or {@code null}
     * @param status the HTTP status (0 or 500 for errors that arrive inside a stream or a socket)
     * @return {@code true} when retrying may help
     */
    public static boolean retryable(JsonNode error, int status) {
        return ErrorBodies.retryable(error, status);
    }

    /**
     * The exception for an error answer.
     *
     * @param status the HTTP status
     * @param body the answer's body, possibly empty or not JSON
     * @return the SDK exception it stands for
     */
    public static RuntimeException answer(int status, byte[] body) {
        return ErrorBodies.exception(WireJson.lenient(body), status);
    }

    /**
     * A {@link BackendException} for an error answer that is not one of the SDK's typed errors (a backend failure, a
     * limit, a proxy's error page).
     *
     * @param status the HTTP status
     * @param error the {@code error} object, or {@code null}
     * @param message the message, naming the status
     * @param cause the cause, or {@code null}
     * @return the exception, retryable as {@link #retryable} says
     */
    public static BackendException answered(int status, JsonNode error, String message, Throwable cause) {
        return ErrorBodies.answered(status, error, message, cause);
    }

    /**
     * A failure that is no answer of the server: it could not be reached, did not answer in time, or the connection
     * broke.
     *
     * @param baseUrl the server's address
     * @param t the failure
     * @param closed whether the provider was closed (its connections are gone)
     * @return an SDK error as it is; a {@link ProviderClosedException} after close; else a {@link BackendException},
     *     retryable when the connection failed
     */
    public static Throwable transport(String baseUrl, Throwable t, boolean closed) {
        if (t instanceof SandboxException) {
            return t;
        }
        if (closed) {
            ProviderClosedException e = new ProviderClosedException(RemoteSession.PROVIDER);
            e.initCause(t);
            return e;
        }
        String reason = TransportFailures.describe(baseUrl, t);
        if (reason != null) {
            return new BackendException(reason, t, connectionFailure(t) && !TransportFailures.untrusted(t));
        }
        String message = t.getMessage() == null || t.getMessage().isBlank() ? "the connection failed" : t.getMessage();
        return new BackendException(
                "the call to the sandbox server at " + baseUrl + " failed: " + message, t, connectionFailure(t));
    }

    /**
     * A stream that dropped and could not be resumed within its reconnects.
     *
     * @param baseUrl the server's address
     * @param reconnects how many reconnects were tried in a row
     * @param last the last failure
     * @return a retryable {@link BackendException}
     */
    public static BackendException dropped(String baseUrl, long reconnects, Throwable last) {
        return new BackendException(
                "the stream from the sandbox server at " + baseUrl + " dropped and could not be resumed after "
                        + reconnects + " reconnects",
                last,
                true);
    }

    /**
     * An answer that breaks the protocol, such as a call answered without the body it needs.
     *
     * @param what what was wrong, such as {@code the server sent no session}
     * @return a {@link BackendException}, not retryable
     */
    public static BackendException protocol(String what) {
        return new BackendException(what, null, false);
    }

    /** Whether a failure means the server was not reached or the connection broke. */
    private static boolean connectionFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException
                    || t instanceof TimeoutException
                    || t instanceof AbortedException
                    || t instanceof io.netty.handler.timeout.TimeoutException) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }
}
