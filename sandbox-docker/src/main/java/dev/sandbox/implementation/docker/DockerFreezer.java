package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import dev.sandbox.SessionTerminatedException;

/**
 * Pauses and unpauses session containers with the cgroup freezer ({@code docker pause}, {@code docker unpause}): every
 * process in the container stops where it is, its memory kept; on gVisor the sandbox's kernel is stopped as a whole.
 */
final class DockerFreezer {
    private DockerFreezer() {}

    /**
     * Pauses a session's container, or unpauses it. Idempotent: a container already in the state asked for is left as
     * it is. Blocking.
     *
     * @param control the daemon
     * @param sessionId the session, named in errors
     * @param containerId its container
     * @param pause {@code true} to pause, {@code false} to unpause
     * @throws SessionTerminatedException when the container is gone or not running
     */
    static void set(DockerControl control, String sessionId, String containerId, boolean pause) {
        try {
            if (pause) {
                control.client().pauseContainerCmd(containerId).exec();
            } else {
                control.client().unpauseContainerCmd(containerId).exec();
            }
        } catch (NotFoundException e) {
            throw new SessionTerminatedException(sessionId, "its container no longer exists");
        } catch (ConflictException e) {
            String m = DockerControl.message(e);
            if (pause ? m.contains("already paused") : m.contains("not paused")) {
                return;
            }
            throw new SessionTerminatedException(sessionId, "its container is not running (" + m + ")");
        } catch (RuntimeException e) {
            throw control.translate((pause ? "pause" : "unpause") + " the container of session " + sessionId, e);
        }
    }

    /**
     * Unpauses a container before its forced removal, whatever its state: the daemon cannot kill a paused gVisor
     * sandbox (it waits 10 s, then reports a zombie). Errors are left to the removal to report. Blocking.
     *
     * @param control the daemon
     * @param containerId the container
     */
    static void unpauseQuietly(DockerControl control, String containerId) {
        try {
            control.client().unpauseContainerCmd(containerId).exec();
        } catch (RuntimeException e) {
            // not paused, gone, or the daemon failed: the removal says what matters
        }
    }
}
