package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.model.Ulimit;
import java.util.List;

/**
 * How a session's process limit becomes Docker settings, per runtime.
 *
 * <p>With {@code runc} the container's processes are host processes: the Docker pids limit (the pids cgroup) is the
 * user's limit.
 *
 * <p>With {@code runsc} (gVisor) the pids cgroup counts gVisor's own host threads, not the sandbox's processes:
 * measured on gVisor release 20221219 (ptrace platform), an idle sandbox holds 54 to 60 of them, each process inside
 * adds about 8 to 10 while it runs ({@code 206} host threads at 16 processes, 565 at 64, 1063 at 128), and the count
 * does not fall when processes end (400 short-lived processes, never more than 11 at once, left 645). A pids limit of
 * the user's value would therefore kill the sandbox (gVisor's Go runtime aborts when it cannot start a thread) at the
 * first commands. So under gVisor the user's limit is applied inside the sandbox as {@code RLIMIT_NPROC}, which
 * gVisor's kernel enforces on every process of the sandbox ({@code fork} fails with {@code EAGAIN}, as under a pids
 * cgroup), and the Docker pids limit becomes a backstop for the host: {@value #GVISOR_BASE_THREADS} plus {@value
 * #GVISOR_THREADS_PER_PROCESS} per allowed process.
 */
public final class DockerLimits {
    /** gVisor's host threads allowed besides those of the sandbox's processes: an idle sandbox, and what it keeps. */
    public static final long GVISOR_BASE_THREADS = 1024;

    /** gVisor's host threads allowed per process the user allows: about twice the measured 8 to 10. */
    public static final long GVISOR_THREADS_PER_PROCESS = 16;

    private DockerLimits() {}

    /**
     * The Docker pids limit ({@code --pids-limit}) for a user's process limit.
     *
     * @param userLimit the most processes the session's commands may have, positive
     * @param runtime the container's runtime as Docker names it ({@code runc}, {@code runsc}, or another)
     * @return the user's limit under {@code runc}; under gVisor ({@code runsc}) {@value #GVISOR_BASE_THREADS} + {@value
     *     #GVISOR_THREADS_PER_PROCESS} &times; the user's limit (saturating), as the host counts gVisor's own threads
     */
    public static long dockerPidsLimit(long userLimit, String runtime) {
        if (!gvisor(runtime)) {
            return userLimit;
        }
        long perProcess = userLimit > (Long.MAX_VALUE - GVISOR_BASE_THREADS) / GVISOR_THREADS_PER_PROCESS
                ? Long.MAX_VALUE - GVISOR_BASE_THREADS
                : userLimit * GVISOR_THREADS_PER_PROCESS;
        return GVISOR_BASE_THREADS + perProcess;
    }

    /**
     * The resource limits of the container's processes that enforce a user's process limit inside the sandbox.
     *
     * @param userLimit the most processes the session's commands may have, positive
     * @param runtime the container's runtime as Docker names it
     * @return {@code nproc} at the user's limit under gVisor; none under {@code runc}, whose pids cgroup enforces the
     *     limit (and where {@code RLIMIT_NPROC} would count every process of the same user on the host)
     */
    public static List<Ulimit> ulimits(long userLimit, String runtime) {
        return gvisor(runtime) ? List.of(new Ulimit("nproc", userLimit, userLimit)) : List.of();
    }

    /**
     * Whether a runtime is gVisor.
     *
     * @param runtime the runtime as Docker names it, or {@code null}
     * @return {@code true} for {@code runsc} and names containing it
     */
    static boolean gvisor(String runtime) {
        return runtime != null && runtime.contains("runsc");
    }
}
