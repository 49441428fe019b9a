package dev.sandbox.pool;

import dev.sandbox.SandboxException;
import org.jspecify.annotations.Nullable;

/**
 * A {@link SandboxPool} could not hand out a session in time: every session it may have is in use and the queue of
 * waiting callers is full, or the caller waited its whole acquire timeout. Retryable: the same call may pass once
 * sessions are released. When the pool's creates were failing meanwhile, the cause is the last failure.
 *
 * <pre>{@code
 * pool.acquire()
 *     .retryWhen(Retry.backoff(3, Duration.ofMillis(500))
 *         .filter(e -> e instanceof PoolAtCapacityException))
 *     .subscribe(session -> ...);
 * }</pre>
 */
public class PoolAtCapacityException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was full and for how long the caller waited
     * @param cause the last failed create, or {@code null}
     */
    public PoolAtCapacityException(String message, @Nullable Throwable cause) {
        super(message, cause, true);
    }
}
