package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionStatus;
import dev.sandbox.implementation.local.LocalSession;
import dev.sandbox.implementation.local.LocalSessionState;
import dev.sandbox.implementation.local.LocalWatcher;
import dev.sandbox.implementation.process.ProcessLauncher;
import dev.sandbox.implementation.session.SessionTimers;
import dev.sandbox.local.LocalSandboxProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import reactor.test.scheduler.VirtualTimeScheduler;

/** Changing a session's lifetime and idle timeout through the blocking client, and seeing it end. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SessionLifetimeTest {

    /** Pings until the session is gone; returns the reason it ended. */
    private static SessionEndReason awaitEnd(SandboxClient client, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                client.ping();
            } catch (SessionClosedException e) {
                return e.reason();
            }
            Thread.sleep(20);
        }
        throw new AssertionError("session " + client.sessionId() + " still runs after " + within);
    }

    @Test
    void pingShowsTheLifetimeAndItCanBeExtended() {
        try (SandboxClient client = SandboxClient.local()) {
            SessionStatus initial = client.ping();
            assertThat(initial.expiresAt())
                    .isBetween(
                            Instant.now().plus(SessionOptions.DEFAULT_LIFETIME).minusSeconds(10),
                            Instant.now().plus(SessionOptions.DEFAULT_LIFETIME));
            assertThat(initial.idleTimeout()).isNull();
            assertThat(initial.endReason()).isNull();

            Instant before = Instant.now();
            client.setLifetime(Duration.ofHours(2));
            client.setIdleTimeout(Duration.ofMinutes(10));

            SessionStatus status = client.ping();
            assertThat(status.expiresAt())
                    .isBetween(before.plus(Duration.ofHours(2)), Instant.now().plus(Duration.ofHours(2)));
            assertThat(status.idleTimeout()).isEqualTo(Duration.ofMinutes(10));
        }
    }

    /** A local session whose timers run on the scheduler's virtual time, in its own workdir. */
    private static SandboxSession virtualTimeSession(
            Path workdir, LocalWatcher watcher, VirtualTimeScheduler scheduler) {
        return new LocalSession(new LocalSessionState(
                "virtual-" + workdir.getFileName(),
                workdir,
                false,
                Map.of("PATH", LocalSandboxProvider.DEFAULT_PATH),
                Map.of(),
                ProcessLauncher.best(),
                watcher,
                s -> {},
                SessionTimers.Time.on(scheduler)));
    }

    /** A lifetime shortened to 300 ms (of virtual time) ends the session and kills its real process. */
    @Test
    void aShortenedLifetimeEndsTheSessionAndKillsItsProcesses(@TempDir Path workdir) throws Exception {
        VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
        LocalWatcher watcher = new LocalWatcher();
        SandboxSession session = virtualTimeSession(workdir, watcher, scheduler);
        try (SandboxClient client = SandboxClient.attach(session)) {
            BackgroundProcessHandle sleeper = client.process().start(ExecOptions.of("sleep", "30"));
            long pid = sleeper.pid().orElseThrow();

            client.setLifetime(Duration.ofMillis(300));
            scheduler.advanceTimeBy(Duration.ofMillis(299));
            assertThat(client.ping().status()).isEqualTo("running");
            scheduler.advanceTimeBy(Duration.ofMillis(1));

            assertThat(awaitEnd(client, Duration.ofSeconds(10))).isEqualTo(SessionEndReason.LIFETIME_EXPIRED);
            Pids.assertGoneWithin(pid, Duration.ofSeconds(2));
            assertThatThrownBy(() -> client.files().list("."))
                    .isInstanceOfSatisfying(
                            SessionClosedException.class,
                            e -> assertThat(e.reason()).isEqualTo(SessionEndReason.LIFETIME_EXPIRED));
        } finally {
            session.destroy().onErrorComplete().block(Duration.ofSeconds(30));
            watcher.close();
            scheduler.dispose();
        }
    }

    /**
     * On a local session whose timers run on virtual time (the blocking client attached to it): writes every 200 ms
     * keep a 600 ms idle timeout from ending it, and it ends once they stop, in no real time.
     */
    @Test
    void anIdleSessionEndsButActivityKeepsItAlive(@TempDir Path workdir) throws Exception {
        VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
        LocalWatcher watcher = new LocalWatcher();
        SandboxSession session = virtualTimeSession(workdir, watcher, scheduler);
        try (SandboxClient client = SandboxClient.attach(session)) {
            client.setIdleTimeout(Duration.ofMillis(600));
            // activity more often than the idle timeout keeps the session
            for (int i = 0; i < 6; i++) {
                client.files().write("beat.txt", new byte[] {(byte) i});
                scheduler.advanceTimeBy(Duration.ofMillis(200));
            }
            assertThat(client.ping().status()).isEqualTo("running");

            scheduler.advanceTimeBy(Duration.ofMillis(600));
            assertThat(awaitEnd(client, Duration.ofSeconds(10))).isEqualTo(SessionEndReason.IDLE_TIMEOUT);
        } finally {
            session.destroy().onErrorComplete().block(Duration.ofSeconds(30));
            watcher.close();
            scheduler.dispose();
        }
    }

    @Test
    void nonPositiveDurationsAreRejected() {
        try (SandboxClient client = SandboxClient.local()) {
            assertThatThrownBy(() -> client.setLifetime(Duration.ZERO))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("lifetime");
            assertThatThrownBy(() -> client.setIdleTimeout(Duration.ofSeconds(-1)))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("idleTimeout");
        }
    }
}
