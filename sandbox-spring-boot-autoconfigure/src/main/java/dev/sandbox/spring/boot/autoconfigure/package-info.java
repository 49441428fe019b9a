/**
 * Spring Boot auto-configuration of the Sandbox SDK:
 * {@link dev.sandbox.spring.boot.autoconfigure.SandboxAutoConfiguration}, its properties ({@code sandbox.*}) and the
 * provider factories it chooses from.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
