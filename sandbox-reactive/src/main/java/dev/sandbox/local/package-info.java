/**
 * The embedded provider, {@link dev.sandbox.local.LocalSandboxProvider}: sessions are directories on this host and
 * commands host processes, with no isolation.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.local;

import org.jspecify.annotations.NullMarked;
