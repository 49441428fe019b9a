/**
 * Warm pools and admission control over any provider: {@link dev.sandbox.pool.SandboxPool} keeps sessions of one
 * template created ahead, hands them out customised by a {@link dev.sandbox.pool.Claim}, destroys what is given back,
 * and bounds how many sessions are alive and how many callers wait.
 */
package dev.sandbox.pool;
