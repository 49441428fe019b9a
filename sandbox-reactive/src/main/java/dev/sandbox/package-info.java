/**
 * The reactive sandbox API: a {@link dev.sandbox.SandboxProvider} creates and finds {@link dev.sandbox.SandboxSession}s,
 * in which commands run ({@link dev.sandbox.ExecOptions}, {@link dev.sandbox.ExecEvent}), background processes and
 * pseudo-terminals live, and files move ({@link dev.sandbox.SandboxFiles}). Every operation is a Reactor {@code Mono}
 * or {@code Flux}; failures are {@link dev.sandbox.SandboxException}s.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox;

import org.jspecify.annotations.NullMarked;
