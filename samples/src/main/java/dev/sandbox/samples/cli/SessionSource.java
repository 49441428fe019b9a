package dev.sandbox.samples.cli;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Where the CLI's commands get their sessions: the only part of the CLI that knows the providers. The commands take a
 * {@link SandboxClient} from here and do not care where it came from. Closing the source releases the provider
 * (after the clients it gave are closed).
 */
interface SessionSource extends AutoCloseable {

    /**
     * A client for a new session that is destroyed when the client is closed ({@code exec}, {@code run}).
     *
     * @param options the session's options
     * @param wait the client's default timeout
     * @return the client
     */
    SandboxClient create(SessionOptions options, Duration wait);

    /**
     * A client for a new session that outlives this command: closing the client releases only the handle ({@code
     * exec --background}).
     *
     * @param options the session's options
     * @param wait the client's default timeout
     * @return the client
     * @throws UsageException when the provider's sessions cannot outlive the command
     */
    SandboxClient createDetached(SessionOptions options, Duration wait) throws UsageException;

    /**
     * A client for an existing session, made by an earlier command; closing it releases only the handle ({@code
     * logs}, {@code cp}, {@code ls-files}).
     *
     * @param sessionId the session's id
     * @param wait the client's default timeout
     * @return the client
     * @throws UsageException when the provider's sessions cannot be reached from another command
     */
    SandboxClient attach(String sessionId, Duration wait) throws UsageException;

    /**
     * A session for {@code shell}: a new one, ended by {@link Lease#close()}, or an existing one, only released.
     *
     * @param sessionId an existing session's id, or {@code null} for a new session
     * @param wait how long getting the session may take
     * @return the session and how to let it go
     * @throws UsageException when the provider's sessions cannot be reached from another command
     */
    Lease session(String sessionId, Duration wait) throws UsageException;

    /**
     * A reactive session handle and what ends or releases it.
     *
     * @param session the session
     * @param release destroys a new session or releases the handle of an existing one
     */
    record Lease(SandboxSession session, Runnable release) implements AutoCloseable {
        @Override
        public void close() {
            release.run();
        }
    }

    /**
     * Makes a session that outlives this command ({@code create}) and releases its handle.
     *
     * @param options the session's options
     * @param fromSnapshot a snapshot to start from, or {@code null}
     * @param wait how long it may take
     * @return the session's id
     * @throws UsageException when the provider's sessions cannot outlive the command
     */
    String createSession(SessionOptions options, String fromSnapshot, Duration wait) throws UsageException;

    /**
     * The sessions that have every given label ({@code ls}).
     *
     * @param labels the labels to match
     * @param wait how long it may take
     * @return the sessions
     * @throws UsageException when the provider's sessions cannot be reached from another command
     */
    List<SessionInfo> list(Map<String, String> labels, Duration wait) throws UsageException;

    /**
     * Removes a session ({@code destroy}).
     *
     * @param sessionId the session
     * @param wait how long it may take
     * @throws UsageException when the provider's sessions cannot be reached from another command
     */
    void destroy(String sessionId, Duration wait) throws UsageException;

    /**
     * Saves a session as a snapshot ({@code snapshot}).
     *
     * @param sessionId the session
     * @param wait how long it may take
     * @return the snapshot's reference
     * @throws UsageException when the provider has no snapshots
     */
    default String snapshot(String sessionId, Duration wait) throws UsageException {
        throw new UsageException("snapshots need --provider docker");
    }

    /**
     * Deletes a snapshot ({@code snapshot rm}); one that does not exist counts as deleted.
     *
     * @param snapshotRef the snapshot's reference
     * @param wait how long to wait
     * @throws UsageException when the provider has no snapshots
     */
    default void deleteSnapshot(String snapshotRef, Duration wait) throws UsageException {
        throw new UsageException("snapshots need --provider docker");
    }

    /** Releases the provider. */
    @Override
    default void close() {}

    /**
     * The source for a provider the parser accepted.
     *
     * @param provider the provider
     * @return its source
     * @throws UsageException when the provider's settings cannot be used (an unreadable token file)
     */
    static SessionSource forProvider(Provider provider) throws UsageException {
        return switch (provider.name()) {
            case "local" -> new LocalSessionSource();
            case "remote" -> RemoteSessionSource.open(provider);
            case "docker" -> DockerSessionSource.open(provider);
            case "kubernetes" -> KubernetesSessionSource.open(provider);
            default ->
                throw new IllegalArgumentException("unknown provider " + provider.name()); // the parser rejects it
        };
    }
}
