/**
 * Warm pools and admission control over any provider: {@link dev.sandbox.pool.SandboxPool} keeps sessions of one
 * template created ahead, hands them out customised by a {@link dev.sandbox.pool.Claim}, destroys what is given back,
 * and bounds how many sessions are alive and how many callers wait.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.pool;

import org.jspecify.annotations.NullMarked;
