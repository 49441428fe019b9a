package dev.sandbox.blocking;

import dev.sandbox.SandboxException;
import org.jspecify.annotations.Nullable;

/**
 * A thread was interrupted while a {@link SandboxClient} call was waiting. By the time this is thrown the operation
 * has been cancelled (a running command is killed) and the thread's interrupt flag has been set again, so code
 * further up still sees the interrupt.
 *
 * <p>It is a {@link SandboxException}, so code that handles every SDK error handles this too; the restored interrupt
 * flag makes the next blocking call fail the same way at once instead of waiting.
 *
 * <pre>{@code
 * try {
 *     client.process().run(ExecOptions.of("make", "test"));
 * } catch (SandboxInterruptedException e) {
 *     // Thread.currentThread().isInterrupted() is true here; the command was killed
 *     return;
 * }
 * }</pre>
 */
public class SandboxInterruptedException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param operation the call that was waiting
     * @param cause the interrupt, or {@code null} when the thread was already interrupted before the call waited
     */
    public SandboxInterruptedException(String operation, @Nullable InterruptedException cause) {
        super(operation + " was interrupted and has been cancelled", cause);
    }
}
