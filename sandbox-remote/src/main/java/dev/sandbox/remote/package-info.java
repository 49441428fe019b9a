/**
 * The remote provider, {@link dev.sandbox.remote.RemoteSandboxProvider}: sessions on a sandbox server reached over
 * HTTP.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.remote;

import org.jspecify.annotations.NullMarked;
