/**
 * The sandbox server, {@link dev.sandbox.server.SandboxServer}: the sessions of any provider over HTTP, for the remote
 * provider or any HTTP client, with {@link dev.sandbox.server.ServerEndpoint} to mount more routes beside them.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.server;

import org.jspecify.annotations.NullMarked;
