package dev.sandbox.server.implementation;

/** An error of the HTTP layer itself (not of a session): an unknown route, a missing token, a limit. */
public final class HttpError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String type;

    /**
     * Creates the error.
     *
     * @param status the HTTP status
     * @param type the error type on the wire, such as {@code RouteNotFound}
     * @param message the explanation
     */
    public HttpError(int status, String type, String message) {
        super(message);
        this.status = status;
        this.type = type;
    }

    /**
     * The HTTP status.
     *
     * @return the status
     */
    public int status() {
        return status;
    }

    /**
     * The error type on the wire.
     *
     * @return the type
     */
    public String type() {
        return type;
    }
}
