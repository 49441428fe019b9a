package dev.sandbox.samples.cli;

import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import java.time.Duration;

/**
 * Where the CLI's commands get their sessions: the only part of the CLI that knows the providers. The commands take a
 * {@link SandboxClient} from here and do not care where it came from, so a provider whose sessions outlive the CLI
 * (docker, remote) needs only its own source, returned by {@link #forProvider(String)}.
 */
interface SessionSource {

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
     * The source for a provider the parser accepted.
     *
     * @param provider the provider's name, one of {@link CommandLine#PROVIDERS}
     * @return its source
     */
    static SessionSource forProvider(String provider) {
        return switch (provider) {
            case "local" -> new LocalSessionSource();
            default -> throw new IllegalArgumentException("unknown provider " + provider); // the parser rejects it
        };
    }
}
