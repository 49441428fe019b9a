/**
 * The Docker provider behind {@link dev.sandbox.docker.DockerSandboxProvider}: {@code DockerSession} (a handle),
 * {@code AgentFiles} (files and watches through the session's agent) and {@code DockerSessionState}, one session
 * shared by all its handles. The control plane is {@link dev.sandbox.implementation.docker.DockerControl} (the
 * daemon's request/response calls: create, start, limits, snapshot, remove, list) with {@link
 * dev.sandbox.implementation.docker.DockerSessions} (the registry: create, attach, list, destroy), {@link
 * dev.sandbox.implementation.docker.DockerSweeper}, {@link dev.sandbox.implementation.docker.DockerSnapshots} and
 * {@code DockerTimers}. The data plane is the agent: {@code AgentInstaller} puts {@code sandbox-agent} into a volume
 * per daemon and build that every container mounts read-only, and makes it the main process ({@code AgentVolumes}
 * decides when another build's volume may go); {@code ContainerAgent} holds one connection to it per
 * session (one daemon exec of {@code sandbox-agent relay}, {@code DockerAgentTransport}, over {@link
 * dev.sandbox.implementation.docker.DockerDataPlane}), and every command, signal, terminal, file operation and watch
 * is frames on it ({@link dev.sandbox.implementation.agent.AgentConnection}). Internal: not part of the public API;
 * the README's Development section describes the layout every provider shares.
 */
package dev.sandbox.implementation.docker;
