package dev.sandbox.samples.cli;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.local.LocalSandboxProvider;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Sessions of the local provider: host processes in a temporary directory, owned by this JVM. They end with the CLI
 * process, so only the commands that make a session and finish with it ({@code exec}, {@code run}) can use them.
 */
final class LocalSessionSource implements SessionSource {
    static final String NOT_PERSISTENT =
            "local sessions live only as long as the sandbox command that made them; use a provider whose sessions"
                    + " outlive the command: --provider docker, or --provider remote (with a sandbox serve)";

    @Override
    public SandboxClient create(SessionOptions options, Duration wait) {
        return SandboxClient.builder().defaultTimeout(wait).local(options);
    }

    @Override
    public SandboxClient createDetached(SessionOptions options, Duration wait) throws UsageException {
        throw new UsageException(
                "exec --background: a background process needs a session that outlives this command, but "
                        + NOT_PERSISTENT);
    }

    @Override
    public SandboxClient attach(String sessionId, Duration wait) throws UsageException {
        throw new UsageException("cannot reach session '" + sessionId + "': " + NOT_PERSISTENT
                + "; for the local provider, run the whole job in one 'sandbox exec'");
    }

    @Override
    public Lease session(String sessionId, Duration wait) throws UsageException {
        if (sessionId != null) {
            attach(sessionId, wait);
        }
        LocalSandboxProvider provider = LocalSandboxProvider.create();
        try {
            SandboxSession session = provider.create(SessionOptions.defaults().withUnlimitedLifetime())
                    .block(wait);
            return new Lease(session, () -> {
                try {
                    session.destroy().block(wait);
                } finally {
                    provider.close();
                }
            });
        } catch (RuntimeException e) {
            provider.close();
            throw e;
        }
    }

    @Override
    public String createSession(SessionOptions options, String fromSnapshot, Duration wait) throws UsageException {
        throw new UsageException("create: " + NOT_PERSISTENT);
    }

    @Override
    public List<SessionInfo> list(Map<String, String> labels, Duration wait) throws UsageException {
        throw new UsageException("ls: " + NOT_PERSISTENT + "; there is nothing to list");
    }

    @Override
    public void destroy(String sessionId, Duration wait) throws UsageException {
        attach(sessionId, wait);
    }
}
