/**
 * A Model Context Protocol server whose tools work in sandbox sessions: {@link dev.sandbox.mcp.SandboxMcpServer}.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.mcp;

import org.jspecify.annotations.NullMarked;
