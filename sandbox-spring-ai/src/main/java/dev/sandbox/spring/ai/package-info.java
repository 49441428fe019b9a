/**
 * Spring AI tool callbacks over the sandbox tools: {@link dev.sandbox.spring.ai.SandboxToolCallbacks}.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.spring.ai;

import org.jspecify.annotations.NullMarked;
