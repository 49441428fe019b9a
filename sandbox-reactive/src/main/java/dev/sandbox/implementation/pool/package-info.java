/** The engine behind {@link dev.sandbox.pool.SandboxPool}. Internal: not part of the public API. */
package dev.sandbox.implementation.pool;
