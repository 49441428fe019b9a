package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.exception.DockerException;
import dev.sandbox.BackendException;
import dev.sandbox.SandboxException;
import dev.sandbox.SessionTerminatedException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import reactor.netty.channel.AbortedException;

/**
 * The one place where failures of the Docker daemon become SDK exceptions, and where it is decided whether retrying
 * can help ({@link SandboxException#isRetryable()}). Every catch block and error mapping of the Docker provider ends
 * here: docker-java's exceptions on the control plane, the HTTP statuses the daemon answers on the data plane's raw
 * connections (exec streams, the archive API), and I/O failures reaching it.
 *
 * <table>
 *   <caption>What is retryable</caption>
 *   <tr><th>failure</th><th>exception</th><th>retryable</th></tr>
 *   <tr><td>the daemon cannot be reached, the connection breaks, no answer in time</td>
 *       <td>{@link BackendException}</td><td>yes</td></tr>
 *   <tr><td>HTTP 408, 429, 502, 503, 504 from the daemon (or a proxy before it)</td>
 *       <td>{@link BackendException}</td><td>yes</td></tr>
 *   <tr><td>an exec start that got no answer at all</td><td>{@link BackendException}</td><td>yes</td></tr>
 *   <tr><td>the container is paused (a snapshot is being committed)</td><td>{@link BackendException}</td>
 *       <td>yes</td></tr>
 *   <tr><td>an image pull or a container removal that did not finish in time, an interrupted wait</td>
 *       <td>{@link BackendException}</td><td>yes</td></tr>
 *   <tr><td>the container is gone or stopped (404 {@code No such container}, 409)</td>
 *       <td>{@link SessionTerminatedException}</td><td>no</td></tr>
 *   <tr><td>any other HTTP status (400, 404, 409, 500...)</td><td>{@link BackendException}</td><td>no</td></tr>
 *   <tr><td>anything else docker-java throws</td><td>{@link BackendException}</td><td>no</td></tr>
 * </table>
 *
 * <p>Failures that depend on what was asked are mapped by their callers to the types that name them: a missing
 * image under pull policy {@code NEVER} or a bad image reference is an {@code InvalidArgumentException}, a file
 * error a {@code FileOperationException}, a program that cannot start a {@code ProcessLaunchException}.
 */
public final class DockerErrors {
    private DockerErrors() {}

    /**
     * Whether an HTTP status from the daemon (or a proxy before it) is a passing condition: 408, 429, 502, 503, 504.
     *
     * @param status the status
     * @return {@code true} when the same request may succeed later
     */
    public static boolean retryableStatus(int status) {
        return status == 408 || status == 429 || status == 502 || status == 503 || status == 504;
    }

    /**
     * A docker-java failure on the control plane, naming what was attempted.
     *
     * @param dockerHost the daemon's address
     * @param what the operation, such as {@code create a container from 'busybox'}
     * @param e the failure
     * @return the error to throw: an SDK error as it is, else a {@link BackendException}
     */
    public static RuntimeException client(URI dockerHost, String what, RuntimeException e) {
        if (e instanceof SandboxException) {
            return e;
        }
        if (e instanceof DockerException d) {
            int status = d.getHttpStatus();
            return backend(
                    "docker: cannot " + what + " (HTTP " + status + "): " + DockerControl.message(e),
                    e,
                    retryableStatus(status));
        }
        Throwable io = connectionFailure(e);
        if (io != null) {
            return backend("docker: cannot " + what + ": the daemon at " + dockerHost + unreachable(io), e, true);
        }
        return backend("docker: cannot " + what + ": " + words(e), e, false);
    }

    /**
     * A failure on a raw connection to the daemon (an exec stream, an archive request) that is not an answer of the
     * daemon: it could not be reached, or the connection broke.
     *
     * @param dockerHost the daemon's address
     * @param what the request, such as {@code an exec stream}
     * @param e the failure
     * @return the error to signal: an SDK error as it is, else a {@link BackendException}, retryable when the
     *     connection failed
     */
    public static RuntimeException connection(URI dockerHost, String what, Throwable e) {
        if (e instanceof SandboxException s) {
            return s;
        }
        Throwable io = connectionFailure(e);
        if (io != null) {
            return backend("docker: " + what + " failed: the daemon at " + dockerHost + unreachable(io), e, true);
        }
        return backend("docker: " + what + " at " + dockerHost + " failed: " + words(e), e, false);
    }

    /**
     * The daemon refused to start an exec on a raw connection.
     *
     * @param sessionId the session
     * @param status the HTTP status, 0 when the connection ended before any answer (retryable), -1 for an answer
     *     that is not HTTP
     * @param message the daemon's message
     * @return {@link SessionTerminatedException} when the container is gone or stopped, else a {@link
     *     BackendException}
     */
    public static RuntimeException execStart(String sessionId, int status, String message) {
        if (status == 404 || status == 409) {
            return new SessionTerminatedException(sessionId, message);
        }
        return backend(
                "docker: exec stream in session " + sessionId + " failed" + (status > 0 ? " (HTTP " + status + ")" : "")
                        + ": " + message,
                null,
                status == 0 || retryableStatus(status));
    }

    /**
     * An exec that cannot be created because its container is paused: a snapshot is being committed, and the same
     * call works once it is.
     *
     * @param sessionId the session
     * @param message the daemon's message
     * @param cause docker-java's error
     * @return a retryable {@link BackendException}
     */
    public static BackendException paused(String sessionId, String message, Throwable cause) {
        return backend("session " + sessionId + "'s container is paused: " + message, cause, true);
    }

    /**
     * An image pull that did not finish within its limit.
     *
     * @param image the reference
     * @param limit the limit
     * @return a retryable {@link BackendException}
     */
    public static BackendException pullTimedOut(String image, Duration limit) {
        return backend("pulling image '" + image + "' did not finish within " + limit, null, true);
    }

    /**
     * An image that a pull reported done and that is still not there: not a passing condition.
     *
     * @param image the reference
     * @return a {@link BackendException}, not retryable
     */
    public static BackendException missingAfterPull(String image) {
        return backend("image '" + image + "' is still missing after a pull", null, false);
    }

    /**
     * A container whose removal the daemon accepted and that is still there after the wait.
     *
     * @param what how to name it
     * @param limit how long it was waited for
     * @return a retryable {@link BackendException}
     */
    public static BackendException removalTimedOut(String what, Duration limit) {
        return backend(what + " was still there " + limit.toSeconds() + " s after its removal started", null, true);
    }

    /**
     * A wait for the daemon that was interrupted (its caller was cancelled); the call itself did not fail.
     *
     * @param what what was waited for, such as {@code pulling image 'busybox'}
     * @param e the interruption
     * @return a retryable {@link BackendException}
     */
    public static BackendException interrupted(String what, InterruptedException e) {
        return backend("interrupted while " + what, e, true);
    }

    /**
     * A helper command inside the container that ran without doing its work.
     *
     * @param what what the helper was for and what it printed
     * @return a {@link BackendException}, not retryable
     */
    public static BackendException helperFailed(String what) {
        return backend(what, null, false);
    }

    /**
     * A client that could not be closed.
     *
     * @param what the client
     * @param e the failure
     * @return a {@link BackendException}, not retryable
     */
    public static BackendException closeFailed(String what, IOException e) {
        return backend("cannot close the " + what, e, false);
    }

    private static BackendException backend(String message, Throwable cause, boolean retryable) {
        return new BackendException(message, cause, retryable);
    }

    /**
     * Whether a failure is a connection to the daemon that could not be made or broke (not an answer of the daemon).
     *
     * @param e the failure
     * @return true for an I/O failure, timeout or aborted connection anywhere in its causes
     */
    static boolean isConnectionFailure(Throwable e) {
        return connectionFailure(e) != null;
    }

    /** The I/O failure or timeout behind an error, if any: the daemon was not reached or the connection broke. */
    private static Throwable connectionFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException || t instanceof TimeoutException || t instanceof AbortedException) {
                return t;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    private static String unreachable(Throwable io) {
        if (io instanceof InterruptedIOException || io instanceof TimeoutException) {
            return " did not answer in time; check that the Docker daemon runs and is not overloaded";
        }
        return " is not reachable (" + reason(io) + "); check that the Docker daemon runs and that DOCKER_HOST (or"
                + " the provider's dockerHost) names its socket, such as unix:///var/run/docker.sock";
    }

    /** A failure's message, or its kind when it has none. */
    private static String words(Throwable e) {
        return e.getMessage() != null && !e.getMessage().isBlank()
                ? e.getMessage()
                : e.getClass().getSimpleName();
    }

    /** Why a connection to the daemon failed, in the operating system's words, without class names. */
    private static String reason(Throwable io) {
        String deepest = null;
        int depth = 0;
        for (Throwable t = io; t != null && depth < 32; t = t.getCause(), depth++) {
            String m = t.getMessage();
            if (t instanceof java.nio.file.NoSuchFileException || m != null && m.contains("No such file")) {
                return "no such socket";
            }
            if (t instanceof java.nio.file.AccessDeniedException || m != null && m.contains("Permission denied")) {
                return "permission denied: this user may not use the daemon's socket";
            }
            if (m != null && m.contains("Connection refused")) {
                return "connection refused";
            }
            if (m != null && !m.isBlank()) {
                deepest = m;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return deepest == null ? "the connection failed" : deepest;
    }
}
