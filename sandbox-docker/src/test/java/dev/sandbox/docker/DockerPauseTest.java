package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.model.Container;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Pause and resume on Docker where the conformance kit cannot look: the container is paused on the daemon, the reaper
 * still removes a paused session whose client is gone (at its deadline, or a lease after its holder stopped renewing),
 * another provider attaches to a paused session and resumes it with its first command, and the container's agent does
 * not end a session paused past its own idle timeout the moment it is thawed.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerPauseTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration LEASE = Duration.ofSeconds(3);

    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerTestSupport.unsweptProvider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    private String state(String sessionId) {
        Container c = support.container(sessionId);
        return c == null ? "gone" : c.getState();
    }

    /** Waits until the session's container is gone, at most until the deadline; returns whether it went. */
    private boolean goneBy(String sessionId, Instant deadline) throws InterruptedException {
        while (Instant.now().isBefore(deadline)) {
            if (support.container(sessionId) == null) {
                return true;
            }
            Thread.sleep(200);
        }
        return support.container(sessionId) == null;
    }

    @Test
    void aPausedSessionWhoseClientWentIsRemovedByTheReaperAtItsDeadline() throws InterruptedException {
        DockerSandboxProvider gone = DockerTestSupport.unsweptProvider();
        SandboxSession session = gone.create(support.sessionOptions().withLifetime(Duration.ofSeconds(4)))
                .block(WAIT);
        Instant created = Instant.now();
        session.pause().block(WAIT);
        assertThat(state(session.id())).isEqualTo("paused");
        gone.close(); // no client is left to end it
        // deadline 4 s (+1 s rounding) plus the 5 s grace, a reaper round and the removal
        assertThat(goneBy(session.id(), created.plusSeconds(20)))
                .as("the paused session past its deadline is removed from outside")
                .isTrue();
    }

    @Test
    void aPausedLeasedSessionIsRemovedALeaseAfterItsHolderWent() throws InterruptedException {
        DockerSandboxProvider dying = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .lease(LEASE)
                .build();
        SandboxSession orphan = dying.create(support.sessionOptions()).block(WAIT);
        orphan.pause().block(WAIT);
        assertThat(state(orphan.id())).isEqualTo("paused");
        Instant start = Instant.now();
        dying.close(); // as a JVM that died: its leases are no longer renewed
        assertThat(goneBy(orphan.id(), start.plus(LEASE.multipliedBy(4))))
                .as("the paused orphan is removed about a lease after its holder went")
                .isTrue();
    }

    @Test
    void anotherProviderFindsThePausedSessionPausedAndItsFirstCommandResumesIt() {
        SandboxSession session = provider.create(support.sessionOptions()).block(WAIT);
        DockerSandboxProvider other = DockerTestSupport.unsweptProvider();
        try {
            session.pause().block(WAIT);
            long t0 = System.nanoTime();
            SandboxSession attached = other.attach(session.id()).block(WAIT);
            assertThat(attached.ping().block(WAIT).status()).isEqualTo("paused");
            assertThat(Duration.ofNanos(System.nanoTime() - t0))
                    .as("attach and ping of a paused session do not wait for its frozen agent")
                    .isLessThan(Duration.ofSeconds(5));
            assertThat(attached.run(ExecOptions.shell("echo woke")).block(WAIT).stdout())
                    .isEqualTo("woke\n");
            assertThat(state(session.id())).isEqualTo("running");
            assertThat(attached.ping().block(WAIT).status()).isEqualTo("running");
        } finally {
            other.close();
            session.destroy().block(WAIT);
        }
    }

    @Test
    void aSessionPausedPastItsAgentsIdleTimeoutLivesOnAfterResume() throws InterruptedException {
        // the agent's own idle timeout is the session's plus the grace (1 s + 10 s): paused longer than that
        SandboxSession session = provider.create(support.sessionOptions().withIdleTimeout(Duration.ofSeconds(1)))
                .block(WAIT);
        try {
            session.pause().block(WAIT);
            Thread.sleep(Duration.ofSeconds(1 + DockerSandboxProvider.IDLE_GRACE_SECONDS + 2));
            assertThat(state(session.id())).isEqualTo("paused");
            session.resume().block(WAIT);
            assertThat(session.run(ExecOptions.shell("echo alive")).block(WAIT).stdout())
                    .isEqualTo("alive\n");
            assertThat(state(session.id())).isEqualTo("running");
        } finally {
            session.destroy().block(WAIT);
        }
    }
}
