/**
 * The session of a provider whose sandbox runs {@code sandbox-agent}, provider-neutral: {@code SessionAgent} (one
 * cached connection to the agent, made again after it broke, and the sandbox's end explained through an {@code
 * AgentHost} the provider implements), {@code AgentSessionState} (what every handle of a session shares) and {@code
 * AgentSession} (the handle: commands, background processes, PTYs, files, ping and status), with the agent-held
 * processes ({@code AgentHeldProcess}, {@code AgentBackgroundProcess}, {@code AgentPty}) and the files ({@code
 * AgentFiles}). The Docker provider runs it over {@code docker exec}; another provider over its own pipe. Uses no
 * provider, Netty or docker-java (sandbox-architecture checks it). Internal: not part of the public API.
 */
package dev.sandbox.implementation.agentsession;
