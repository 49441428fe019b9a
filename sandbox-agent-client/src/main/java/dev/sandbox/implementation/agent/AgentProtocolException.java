package dev.sandbox.implementation.agent;

import dev.sandbox.BackendException;

/**
 * The agent broke the protocol: a malformed frame, an unknown type, a count beyond its limit, more bytes than it was
 * credited, or an unexpected answer. The connection is closed and every open stream fails with this error. Not
 * retryable: whatever answers on the other side does not speak the protocol.
 */
public class AgentProtocolException extends BackendException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was wrong, naming the frame type and stream
     */
    public AgentProtocolException(String message) {
        super("agent protocol violation: " + message, null, false);
    }
}
