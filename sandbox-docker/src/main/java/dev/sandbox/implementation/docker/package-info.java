/**
 * The Docker provider behind {@link dev.sandbox.docker.DockerSandboxProvider}: {@code DockerSession} (a handle),
 * {@code DockerFiles} (tar over the archive API, or exec stdin and stdout) and {@code DockerSessionState}, one session
 * shared by all its handles. The control plane is {@link dev.sandbox.implementation.docker.DockerControl} (the
 * daemon's request/response calls) with {@link dev.sandbox.implementation.docker.DockerSessions} (the registry:
 * create, attach, list, destroy), {@link dev.sandbox.implementation.docker.DockerSweeper}, {@link
 * dev.sandbox.implementation.docker.DockerSnapshots} and {@code DockerTimers}; the data plane is {@link
 * dev.sandbox.implementation.docker.DockerDataPlane} (streams over the daemon's socket) with {@code ContainerExecutor}
 * and {@code ContainerArchive}. Internal: not part of the public API; the README's Development section describes the
 * layout every provider shares.
 */
package dev.sandbox.implementation.docker;
