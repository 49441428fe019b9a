package dev.sandbox;

import java.time.Duration;

/**
 * The collected outcome of {@link SandboxSession#run(ExecOptions)}: both streams as text, exactly as written up to
 * the byte cap ({@link ExecOptions#maxOutputBytes()}), and the exit.
 *
 * <pre>{@code
 * ExecResult result = session.run(ExecOptions.of("python3", "-V")).block(Duration.ofSeconds(10));
 * if (result.exitCode() == 0) System.out.print(result.stdout());
 * }</pre>
 *
 * @param exitCode the exit code; 124 after a timeout, 128 + n when killed by signal n
 * @param stdout standard output decoded with the command's charset, truncated to the cap
 * @param stderr standard error decoded with the command's charset, truncated to the cap
 * @param stdoutTruncated whether stdout was longer than the cap (the head is kept)
 * @param stderrTruncated whether stderr was longer than the cap (the head is kept)
 * @param stdoutBytes how many bytes the command wrote to stdout in all
 * @param stderrBytes how many bytes the command wrote to stderr in all
 * @param termination how the command ended
 * @param duration wall time from start to exit
 */
public record ExecResult(
        int exitCode,
        String stdout,
        String stderr,
        boolean stdoutTruncated,
        boolean stderrTruncated,
        long stdoutBytes,
        long stderrBytes,
        ExecEvent.Termination termination,
        Duration duration) {

    /**
     * Whether the command was killed by its timeout or idle timeout.
     *
     * @return {@code true} when the command timed out
     */
    public boolean timedOut() {
        return termination == ExecEvent.Termination.TIMED_OUT || termination == ExecEvent.Termination.IDLE_TIMED_OUT;
    }
}
