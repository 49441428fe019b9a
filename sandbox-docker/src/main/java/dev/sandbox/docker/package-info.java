/**
 * The Docker provider, {@link dev.sandbox.docker.DockerSandboxProvider}: each session a container on a Docker daemon,
 * configured by {@link dev.sandbox.docker.DockerSettings}.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.docker;

import org.jspecify.annotations.NullMarked;
