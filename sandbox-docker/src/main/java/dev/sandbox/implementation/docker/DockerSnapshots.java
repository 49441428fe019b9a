package dev.sandbox.implementation.docker;

import static dev.sandbox.implementation.docker.DockerSessions.blocking;

import com.github.dockerjava.api.model.Container;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Mono;

/**
 * Snapshots: commits session containers to local images, starts sessions from them, and removes them. Internal: not
 * part of the public API.
 */
public final class DockerSnapshots {
    private final DockerControl control;
    private final DockerSessions sessions;

    /**
     * Snapshots of the sessions of one provider.
     *
     * @param control the daemon's control plane
     * @param sessions the provider's sessions
     */
    public DockerSnapshots(DockerControl control, DockerSessions sessions) {
        this.control = control;
        this.sessions = sessions;
    }

    /**
     * Creates a session from a snapshot; the image is never pulled.
     *
     * @param snapshotRef a reference returned by {@link #snapshot(String)}
     * @param options options for the new session
     * @param settings settings whose image and pull policy are replaced by the snapshot's
     * @return the new session, or {@link InvalidArgumentException} when no such snapshot exists here
     */
    public Mono<SandboxSession> restore(String snapshotRef, SessionOptions options, DockerSettings settings) {
        return Mono.defer(() -> {
            if (snapshotRef == null || snapshotRef.isBlank()) {
                throw new InvalidArgumentException(
                        "snapshotRef", "snapshotRef must name a snapshot, got '" + snapshotRef + "'");
            }
            return sessions.create(
                            options, settings.withImage(snapshotRef).withPullPolicy(DockerSettings.PullPolicy.NEVER))
                    .onErrorMap(
                            e -> e instanceof InvalidArgumentException i
                                    && i.field().equals("image"),
                            e -> new InvalidArgumentException(
                                    "snapshotRef",
                                    "no snapshot '" + snapshotRef + "' on this Docker host: " + e.getMessage()));
        });
    }

    /**
     * Commits a session's container to a local image, pausing it meanwhile.
     *
     * @param sessionId the session
     * @return the snapshot's reference
     */
    public Mono<String> snapshot(String sessionId) {
        return Mono.defer(() -> {
            sessions.ensureOpen();
            return blocking(() -> {
                List<Container> found = control.listSessions(Map.of(DockerControl.SESSION_LABEL, sessionId), false);
                if (found.isEmpty()) {
                    throw new SessionNotFoundException(sessionId);
                }
                String tag = sessionId + "-" + System.currentTimeMillis();
                control.commit(
                        found.get(0).getId(),
                        DockerSandboxProvider.SNAPSHOT_REPOSITORY,
                        tag,
                        Map.of(DockerControl.SNAPSHOT_SOURCE_LABEL, sessionId));
                return DockerSandboxProvider.SNAPSHOT_REPOSITORY + ":" + tag;
            });
        });
    }

    /**
     * Removes a snapshot image; one that does not exist counts as removed.
     *
     * @param snapshotRef the snapshot's reference
     * @return completes when it is gone
     */
    public Mono<Void> deleteSnapshot(String snapshotRef) {
        return Mono.defer(() -> {
            sessions.ensureOpen();
            return blocking(() -> {
                        control.removeImage(snapshotRef);
                        return Boolean.TRUE;
                    })
                    .then();
        });
    }
}
