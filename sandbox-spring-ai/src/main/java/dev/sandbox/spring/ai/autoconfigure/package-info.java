/**
 * Spring Boot auto-configuration of the Spring AI tool callbacks:
 * {@link dev.sandbox.spring.ai.autoconfigure.SandboxAiToolsAutoConfiguration} and its properties.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.spring.ai.autoconfigure;

import org.jspecify.annotations.NullMarked;
