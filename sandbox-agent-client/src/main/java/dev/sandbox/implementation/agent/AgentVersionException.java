package dev.sandbox.implementation.agent;

/** The agent and the client have no protocol version in common. */
public class AgentVersionException extends AgentProtocolException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message both ranges, the client's and what the agent said
     */
    public AgentVersionException(String message) {
        super(message);
    }
}
