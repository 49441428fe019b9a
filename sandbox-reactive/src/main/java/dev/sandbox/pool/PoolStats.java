package dev.sandbox.pool;

/**
 * What a {@link SandboxPool} holds at one moment, from {@link SandboxPool#stats()}.
 *
 * <pre>{@code
 * PoolStats s = pool.stats();
 * System.out.println(s.warm() + " warm, " + s.inUse() + " in use, " + s.waiting() + " waiting");
 * }</pre>
 *
 * @param warm sessions created and waiting to be handed out
 * @param inUse sessions handed out and not yet released
 * @param waiting callers waiting for a session
 * @param creating creates in flight
 * @param destroying released sessions being destroyed (still alive until they are gone)
 * @param acquired sessions handed out since the pool was built
 * @param coldAcquires of those, the ones a caller had to wait for a create for (no warm session was there)
 * @param createFailures creates that failed since the pool was built
 * @param rejected acquires that failed with {@link PoolAtCapacityException}
 */
public record PoolStats(
        int warm,
        int inUse,
        int waiting,
        int creating,
        int destroying,
        long acquired,
        long coldAcquires,
        long createFailures,
        long rejected) {

    /**
     * Sessions alive or about to be: warm, in use, being created and being destroyed; never more than the pool's
     * {@linkplain SandboxPool.Builder#maxSessions(int) cap}.
     *
     * @return the sum
     */
    public int alive() {
        return warm + inUse + creating + destroying;
    }
}
