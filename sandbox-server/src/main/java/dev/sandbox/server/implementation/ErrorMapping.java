package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.BackendException;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.implementation.wire.ErrorBodies;
import dev.sandbox.implementation.wire.WireJson;
import java.util.Set;

/**
 * The one place where errors become HTTP answers: the status for each SDK exception and the JSON body ({@code
 * {"error": {"type": ..., "message": ..., "retryable": ..., ...}}}) that the remote provider turns back into the same
 * exception, as retryable as it was here.
 */
public final class ErrorMapping {
    /** The fields of file routes that carry paths: a rejected path there is a confinement refusal, so 403. */
    private static final Set<String> PATH_FIELDS = Set.of("path", "from", "to");

    private ErrorMapping() {}

    /**
     * The HTTP status for an error.
     *
     * @param t the error
     * @param fileRoute whether the request was a files route (path refusals are 403 there)
     * @return the status
     */
    public static int status(Throwable t, boolean fileRoute) {
        return switch (t) {
            case HttpError e -> e.status();
            case WireJson.MalformedJsonException e -> 400;
            case InvalidArgumentException e -> fileRoute && PATH_FIELDS.contains(e.field()) ? 403 : 400;
            case SessionNotFoundException e -> 404;
            case ProcessNotFoundException e -> 404;
            case FileOperationException e ->
                switch (e.reason()) {
                    case NOT_FOUND -> 404;
                    case PERMISSION_DENIED -> 403;
                    case TOO_LARGE -> 413;
                    case DISK_FULL -> 507;
                    case IO_ERROR -> 500;
                    default -> 409;
                };
            case SessionClosedException e -> 410;
            case OffsetUnavailableException e -> 416;
            case SandboxStateException e -> 409;
            case dev.sandbox.SessionNameInUseException e -> 409;
            // the sandbox's server refused or broke the connection: a bad gateway, as a proxy says it
            case dev.sandbox.PortConnectionException e -> 502;
            case UnsupportedFeatureException e -> 501;
            case SandboxTimeoutException e -> 504;
            case ProcessLaunchException e -> 422;
            // the server's warm pool is full and its queue too: busy, not broken; retryable as the exception says
            case dev.sandbox.pool.PoolAtCapacityException e -> 503;
            case BackendException e -> 502;
            case SandboxException e -> 500;
            default -> 500;
        };
    }

    /**
     * The JSON body for an error.
     *
     * @param t the error
     * @return the body
     */
    public static ObjectNode body(Throwable t) {
        ObjectNode body = switch (t) {
            case HttpError e -> ErrorBodies.error(e.type(), e.getMessage());
            case WireJson.MalformedJsonException e -> ErrorBodies.error("MalformedRequest", e.getMessage());
            case SandboxException e -> ErrorBodies.error(e);
            default ->
                ErrorBodies.error(
                        "InternalError", "internal error: " + t.getClass().getSimpleName());
        };
        ObjectNode error = (ObjectNode) body.get("error");
        error.put("retryable", retryable(t));
        for (String field : new String[] {"message", "path"}) {
            if (error.hasNonNull(field)) {
                error.put(field, HostPaths.scrub(error.get(field).asText()));
            }
        }
        return body;
    }

    /**
     * Whether the same request may succeed when sent again: what the SDK exception says, and for the server's own
     * errors the passing ones, too many sessions or commands (429) and shutting down (503).
     *
     * @param t the error
     * @return the {@code retryable} field of the error object
     */
    public static boolean retryable(Throwable t) {
        return switch (t) {
            case HttpError e -> e.status() == 429 || e.status() == 503;
            case SandboxException e -> e.isRetryable();
            default -> false;
        };
    }
}
