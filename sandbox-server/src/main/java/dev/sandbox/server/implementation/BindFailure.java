package dev.sandbox.server.implementation;

import dev.sandbox.BackendException;

/** Says in one sentence why the server could not listen on its address, and what to do about it. */
public final class BindFailure {
    private BindFailure() {}

    /**
     * The exception for a failed bind.
     *
     * @param host the address the server was to listen on
     * @param port the port
     * @param failure what the network library threw
     * @return a {@link BackendException} naming the address and the remedy, not retryable
     */
    public static BackendException of(String host, int port, Throwable failure) {
        String where = (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        String root = rootMessage(failure);
        String why;
        if (root.contains("Address already in use")) {
            why = "port " + port + " is already in use by another program (perhaps another sandbox serve); stop it,"
                    + " or choose another port (0 picks a free one)";
        } else if (root.contains("Permission denied")) {
            why = "listening on port " + port + " needs privileges this process lacks; choose a port above 1023";
        } else if (root.contains("Cannot assign requested address")) {
            why = "'" + host + "' is not an address of this machine; choose one of its addresses, such as 127.0.0.1";
        } else {
            why = root;
        }
        return new BackendException("cannot listen on " + where + ": " + why, failure, false);
    }

    private static String rootMessage(Throwable failure) {
        String message = null;
        int depth = 0;
        for (Throwable t = failure; t != null && depth < 32; t = t.getCause(), depth++) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                message = t.getMessage();
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return message == null ? "the bind failed" : message;
    }
}
