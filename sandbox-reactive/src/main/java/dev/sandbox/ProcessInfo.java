package dev.sandbox;

import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A summary of a background process, as listed by {@link SandboxSession#processes()}, or of a command on a
 * pseudo-terminal, as listed by {@link SandboxSession#ptys()}.
 *
 * <pre>{@code
 * session.processes().filter(ProcessInfo::running).map(ProcessInfo::id).subscribe(System.out::println);
 * }</pre>
 *
 * @param id the process's id within its session
 * @param argv the command it runs
 * @param pid the operating-system pid inside the sandbox, or -1 when unknown
 * @param startedAt when it was started
 * @param running whether it is still running
 * @param exitCode its exit code once it has ended, or {@code null} while it runs
 */
public record ProcessInfo(
        String id,
        List<String> argv,
        long pid,
        Instant startedAt,
        boolean running,
        @Nullable Integer exitCode) {
    /**
     * Creates the summary.
     *
     * @param id the process's id within its session
     * @param argv the command it runs
     * @param pid the pid inside the sandbox, or -1
     * @param startedAt when it was started
     * @param running whether it is still running
     * @param exitCode its exit code, or {@code null} while it runs
     */
    public ProcessInfo {
        argv = List.copyOf(argv);
    }
}
