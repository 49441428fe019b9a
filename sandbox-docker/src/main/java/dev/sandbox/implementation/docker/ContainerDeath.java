package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.command.InspectContainerResponse;
import java.util.Map;

/**
 * Says why a session's container ended, for the message of a {@link dev.sandbox.SessionTerminatedException}: from
 * {@code docker inspect}'s {@code State} ({@code OOMKilled}, {@code ExitCode}, {@code Error}) and the container's
 * runtime and limits, or, when the container is already gone, from its {@code die} event.
 */
final class ContainerDeath {
    private static final long MIB = 1024 * 1024;

    private ContainerDeath() {}

    /**
     * The cause of a stopped container, as its inspect shows it.
     *
     * @param c the container
     * @return such as {@code its container is exited: it ran out of memory (...)}
     */
    static String describe(InspectContainerResponse c) {
        var state = c.getState();
        String status = state == null || state.getStatus() == null ? "unknown" : state.getStatus();
        if (state == null) {
            return "its container is " + status;
        }
        var host = c.getHostConfig();
        return "its container is " + status + ": "
                + cause(
                        Boolean.TRUE.equals(state.getOOMKilled()),
                        state.getExitCodeLong(),
                        state.getError(),
                        host == null ? null : host.getRuntime(),
                        host == null ? null : host.getMemory(),
                        host == null ? null : host.getPidsLimit());
    }

    /**
     * The cause of a container that is gone, as its {@code die} event shows it.
     *
     * @param attributes the event's attributes ({@code exitCode})
     * @param oomSeen whether an {@code oom} event of the container was seen
     * @return such as {@code its container was removed: it was killed from outside (SIGKILL, exit code 137)}
     */
    static String describe(Map<String, String> attributes, boolean oomSeen) {
        Long code;
        try {
            code = Long.valueOf(attributes.getOrDefault("exitCode", ""));
        } catch (NumberFormatException e) {
            code = null;
        }
        return "its container was removed: " + cause(oomSeen, code, null, null, null, null);
    }

    /**
     * Names the cause of a container's end.
     *
     * @param oomKilled whether Docker saw an out-of-memory kill in the container
     * @param exitCode the container's exit code, or {@code null}
     * @param error the daemon's error, or {@code null}
     * @param runtime the runtime as Docker names it, or {@code null} when unknown
     * @param memory the memory limit in bytes, or {@code null}
     * @param pids the Docker pids limit, or {@code null}
     * @return the cause
     */
    static String cause(boolean oomKilled, Long exitCode, String error, String runtime, Long memory, Long pids) {
        String code = exitCode == null ? "" : "exit code " + exitCode;
        String detail = error == null || error.isBlank() ? "" : "; the daemon says: " + error.strip();
        boolean gvisor = DockerLimits.gvisor(runtime);
        String limit = memory != null && memory > 0 ? " of " + memory / MIB + " MiB" : "";
        if (oomKilled && (exitCode == null || exitCode == 137)) {
            if (gvisor || runtime == null) {
                return "it ran out of memory: at its memory limit" + limit
                        + " the host's OOM killer ended the sandbox (" + code + ")" + detail;
            }
            return "it was killed (" + code + ") after running out of memory at its memory limit" + limit + detail;
        }
        if (gvisor && exitCode != null && exitCode == 2 && pids != null && pids > 0) {
            return "it hit its process limit: gVisor could not start a host thread under the pids limit of " + pids
                    + " (" + code + ")" + detail;
        }
        if (exitCode != null && exitCode == 137) {
            return "it was killed from outside (SIGKILL, " + code + ")" + detail;
        }
        if (exitCode != null && exitCode == 143) {
            return "it was stopped from outside (SIGTERM, " + code + ")" + detail;
        }
        if (exitCode != null && exitCode == 0) {
            return "its agent ended it (a stop from outside, or the container's own lifetime or idle timeout)" + detail;
        }
        return "it exited" + (code.isEmpty() ? "" : " with " + code) + detail;
    }
}
