package dev.sandbox.implementation.docker;

import dev.sandbox.docker.DockerSandboxProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import reactor.core.publisher.Mono;

/**
 * A Docker session's lifetime and idle timeout on both sides: as this client enforces them (the session's {@link
 * dev.sandbox.implementation.session.SessionTimers}) and as the container's keep-alive enforces them when no client is
 * left (its arguments, labels and timers file), with the grace the keep-alive adds.
 */
final class DockerTimers {
    private DockerTimers() {}

    /**
     * Changes a session's lifetime and idle timeout: here, and in the container for its keep-alive.
     *
     * @param state the session
     * @param lifetime the new lifetime from now, or unchanged when {@code null}
     * @param idle the new idle timeout, or unchanged when {@code null}
     * @return completes when the container knows
     */
    static Mono<Void> setTimers(DockerSessionState state, Duration lifetime, Duration idle) {
        return Mono.defer(() -> {
            if (lifetime != null) {
                state.timers.setLifetime(lifetime);
            }
            if (idle != null) {
                state.timers.setIdleTimeout(idle);
            }
            Instant expires = state.timers.expiresAt();
            Duration idleNow = state.timers.idleTimeout();
            long deadline = expires == null ? 0 : expires.getEpochSecond() + 1;
            // the authority first: the reaper's record, which code in the sandbox cannot reach
            Mono<Void> recorded = state.reaper == null || deadline == 0
                    ? Mono.empty()
                    : state.reaper.writeDeadline(state.id, reaperDeadline(deadline));
            // then the container's agent, a convenience for when no client is left (with the grace the SDK keeps
            // for itself, so a holder ends its session first and says why)
            long agentDeadline = deadline == 0 ? 0 : Long.parseLong(backstopDeadline(deadline)) * 1000;
            long agentIdle = Long.parseLong(backstopIdle(idleNow)) * 1000;
            return recorded.then(state.agent.untilTerminated(
                    state.agent.connection().flatMap(c -> c.timers(agentDeadline, agentIdle))));
        });
    }

    /**
     * Gives the container's agent its idle timeout, or none while the session is paused: a frozen agent's monotonic
     * clock runs on, and it would end the session as idle the moment it is thawed. Nothing is sent for a session
     * without an idle timeout (its agent has none).
     *
     * @param state the session
     * @param paused whether the session is being paused
     * @return completes when the agent knows
     */
    static Mono<Void> agentIdle(DockerSessionState state, boolean paused) {
        return Mono.defer(() -> {
            Duration idleNow = state.timers.idleTimeout();
            if (idleNow == null) {
                return Mono.empty();
            }
            Instant expires = state.timers.expiresAt();
            long deadline = expires == null ? 0 : expires.getEpochSecond() + 1;
            long agentDeadline = deadline == 0 ? 0 : Long.parseLong(backstopDeadline(deadline)) * 1000;
            long agentIdle = paused ? 0 : Long.parseLong(backstopIdle(idleNow)) * 1000;
            return state.agent.untilTerminated(state.agent.ungated().flatMap(c -> c.timers(agentDeadline, agentIdle)));
        });
    }

    /**
     * When the reaper removes a session whose deadline is this: the grace lets its holder end it first and say why.
     *
     * @param deadlineEpochSeconds the session's deadline
     * @return the removal time in epoch seconds
     */
    static long reaperDeadline(long deadlineEpochSeconds) {
        return deadlineEpochSeconds + DockerSandboxProvider.LIFETIME_GRACE_SECONDS;
    }

    /**
     * The deadline of a session, in epoch millis, from the time its reaper removes it.
     *
     * @param removalEpochSeconds the {@link DockerControl#EXPIRES_LABEL} value or the recorded deadline
     * @return the deadline, 0 for none
     */
    static long deadlineMillis(long removalEpochSeconds) {
        return removalEpochSeconds <= 0
                ? 0
                : (removalEpochSeconds - DockerSandboxProvider.LIFETIME_GRACE_SECONDS) * 1000;
    }

    static String backstopDeadline(long deadlineEpochSeconds) {
        return Long.toString(
                deadlineEpochSeconds > 0 ? deadlineEpochSeconds + DockerSandboxProvider.LIFETIME_GRACE_SECONDS : 0);
    }

    static String backstopIdle(Duration idle) {
        return Long.toString(idle == null ? 0 : seconds(idle) + DockerSandboxProvider.IDLE_GRACE_SECONDS);
    }

    /** The deadline (epoch millis) and idle timeout (millis) a container was created with; 0 for none. */
    static long[] labelTimers(Map<String, String> labels) {
        long[] out = new long[2];
        try {
            out[0] = deadlineMillis(Long.parseLong(labels.getOrDefault(DockerControl.EXPIRES_LABEL, "never")));
        } catch (NumberFormatException e) {
            out[0] = 0;
        }
        try {
            out[1] = Long.parseLong(labels.getOrDefault(DockerControl.IDLE_LABEL, "none")) * 1000;
        } catch (NumberFormatException e) {
            out[1] = 0;
        }
        return out;
    }

    static long seconds(Duration d) {
        if (d == null) {
            return 0;
        }
        long s = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
        return Math.max(1, s);
    }
}
