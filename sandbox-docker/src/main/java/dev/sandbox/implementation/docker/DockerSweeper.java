package dev.sandbox.implementation.docker;

import static dev.sandbox.implementation.docker.DockerSessions.blocking;

import com.github.dockerjava.api.model.Container;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The sweeper: removes the session containers on the daemon that are past their lifetime, have stopped, or were never
 * started, periodically and on demand, and makes the provider forget the sessions whose containers are gone.
 * Internal: not part of the public API.
 */
public final class DockerSweeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DockerSweeper.class);

    private final DockerControl control;
    private final DockerSessions sessions;
    private final Disposable sweeper;

    /**
     * Starts sweeping.
     *
     * @param control the daemon's control plane
     * @param sessions the provider's sessions
     * @param sweepInterval how often to sweep, or {@code null} to sweep only on demand
     */
    public DockerSweeper(DockerControl control, DockerSessions sessions, Duration sweepInterval) {
        this.control = control;
        this.sessions = sessions;
        this.sweeper = sweepInterval == null
                ? null
                : Flux.interval(sweepInterval, sweepInterval)
                        .onBackpressureDrop()
                        .concatMap(
                                tick -> (sessions.reaper() != null ? forgetGone(List.of()) : sweep())
                                        .onErrorResume(e -> {
                                            LOG.debug("sweep failed: {}", e.toString());
                                            return Mono.empty();
                                        }),
                                1)
                        .subscribe();
    }

    /**
     * Sweeps once: has the reaper do a round now (or, without a reaper, removes what the labels and this provider's
     * own sessions say is expired), then forgets the sessions whose containers are gone.
     *
     * @return the ids of the sessions removed
     */
    public Mono<List<String>> sweep() {
        return Mono.defer(() -> {
            sessions.ensureOpen();
            DockerReaper reaper = sessions.reaper();
            Mono<List<String>> removal = reaper != null
                    ? reaper.sweepOnce()
                    : blocking(() -> control.sweep(Instant.now().getEpochSecond(), sessions.heldDeadlines()));
            return removal.flatMap(this::forgetGone);
        });
    }

    /** Forgets the sessions whose containers are gone; the periodic round when a reaper does the removing. */
    private Mono<List<String>> forgetGone(List<String> removed) {
        return Mono.defer(() -> {
            sessions.ensureOpen();
            return blocking(() -> {
                // forget sessions whose containers are gone (swept, expired, removed from outside); their handles
                // answer with SessionTerminatedException from now on
                long listedAt = System.nanoTime();
                Set<String> alive = new HashSet<>();
                for (Container c : control.listSessions(Map.of(), true)) {
                    alive.add(c.getLabels().get(DockerControl.SESSION_LABEL));
                }
                sessions.forget(s -> !alive.contains(s.id) && s.registeredNanos - listedAt < 0);
                sessions.sweepChannels(alive);
                sessions.sweepLabels(alive);
                if (!removed.isEmpty()) {
                    LOG.info("swept expired docker sessions {}", removed);
                }
                return List.copyOf(removed);
            });
        });
    }

    /** Stops the periodic sweeping; a sweep under way finishes. */
    @Override
    public void close() {
        if (sweeper != null) {
            sweeper.dispose();
        }
    }
}
