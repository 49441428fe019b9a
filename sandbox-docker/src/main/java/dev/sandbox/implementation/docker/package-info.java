/**
 * The Docker provider behind {@link dev.sandbox.docker.DockerSandboxProvider}: {@code DockerSession} (a handle) and
 * {@code DockerSessionState} (one session shared by all its handles), thin over the provider-neutral agent-backed
 * session of {@code dev.sandbox.implementation.agentsession} (module {@code sandbox-agent-client}: commands,
 * background processes, PTYs, files and watches through the session's agent). The control plane is {@link
 * dev.sandbox.implementation.docker.DockerControl} (the daemon's request/response calls: create, start, limits,
 * snapshot, remove, list) with {@link dev.sandbox.implementation.docker.DockerSessions} (the registry: create, attach,
 * list, destroy), {@link dev.sandbox.implementation.docker.DockerSweeper}, {@link
 * dev.sandbox.implementation.docker.DockerSnapshots} and {@code DockerTimers}. The data plane is the agent: {@code
 * AgentInstaller} puts {@code sandbox-agent} into a volume per daemon and build that every container mounts
 * read-only, and makes it the main process ({@code AgentVolumes} decides when another build's volume may go); the
 * session's {@code SessionAgent} holds one connection to it per session through {@code DockerAgentHost}: over the
 * session's direct channel where the daemon shares this host's files ({@code AgentChannels}, {@code
 * DirectAgentTransport}), else one daemon exec of {@code sandbox-agent relay} ({@code DockerAgentTransport}, over
 * {@link dev.sandbox.implementation.docker.DockerDataPlane}); and one inspect for the container's working directory or
 * end;
 * and every command, signal, terminal, file operation and watch is frames on it ({@link
 * dev.sandbox.implementation.agent.AgentConnection}). Internal: not part of the public API; the README's Development
 * section describes the layout every provider shares.
 */
package dev.sandbox.implementation.docker;
