package dev.sandbox.implementation.agent;

/**
 * The agent's answer to {@code HELLO}. Untrusted: code in the sandbox can lie about all of it.
 *
 * @param version the protocol version chosen
 * @param agent the agent's name and version
 * @param pid the agent's process id
 * @param deadlineMs the agent's deadline, epoch milliseconds (0 none)
 * @param idleMs the agent's idle timeout (0 none)
 * @param nowMs the agent's clock
 */
public record AgentHello(int version, String agent, long pid, long deadlineMs, long idleMs, long nowMs) {}
