/**
 * The sandbox operations an AI model may call, bounded by limits: {@link dev.sandbox.tools.SandboxTools}, which the
 * Spring AI, LangChain4j and MCP integrations adapt.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.tools;

import org.jspecify.annotations.NullMarked;
