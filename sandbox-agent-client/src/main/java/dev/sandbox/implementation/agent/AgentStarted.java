package dev.sandbox.implementation.agent;

/**
 * A process the agent started ({@code STARTED}).
 *
 * @param pid the process id inside the sandbox
 * @param id the agent's id for it (background processes: {@code p1}, {@code p2}, ...)
 */
public record AgentStarted(long pid, String id) {}
