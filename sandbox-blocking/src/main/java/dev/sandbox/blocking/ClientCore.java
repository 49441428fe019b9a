package dev.sandbox.blocking;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/** What the sub-clients share with their {@link SandboxClient}: the session, the settings and the closed flag. */
final class ClientCore {
    final SandboxSession session;
    final Duration defaultTimeout;
    final int streamPrefetch;
    final AtomicBoolean closed = new AtomicBoolean();

    ClientCore(SandboxSession session, Duration defaultTimeout, int streamPrefetch) {
        this.session = session;
        this.defaultTimeout = defaultTimeout;
        this.streamPrefetch = streamPrefetch;
    }

    void ensureOpen() {
        if (closed.get()) {
            throw new SessionClosedException(session.id());
        }
    }
}
