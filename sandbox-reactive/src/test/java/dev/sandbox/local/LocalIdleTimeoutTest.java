package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.local.LocalSession;
import dev.sandbox.implementation.local.LocalSessionState;
import dev.sandbox.implementation.local.LocalWatcher;
import dev.sandbox.implementation.process.ProcessLauncher;
import dev.sandbox.implementation.session.SessionTimers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The idle timeout counts a running command as activity, in the background as in the foreground, as {@link
 * SessionOptions#withIdleTimeout(Duration)} promises ("no command started or running"). A local session with a real
 * background process, whose idle timeout runs on virtual time: an hour passes in no time while the process runs.
 */
class LocalIdleTimeoutTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
    private final LocalWatcher watcher = new LocalWatcher();

    @TempDir
    Path workdir;

    @AfterEach
    void stop() {
        watcher.close();
        scheduler.dispose();
    }

    @Test
    void aRunningBackgroundProcessKeepsAnIdleSessionAlive() {
        LocalSessionState state = new LocalSessionState(
                "idle-1",
                workdir,
                false,
                Map.of("PATH", LocalSandboxProvider.DEFAULT_PATH),
                Map.of(),
                ProcessLauncher.best(),
                watcher,
                s -> {},
                SessionTimers.Time.on(scheduler));
        SandboxSession s = new LocalSession(state);
        try {
            state.timers.setIdleTimeout(Duration.ofMillis(400));
            // runs until its stdin closes
            BackgroundProcess p = s.start(ExecOptions.of("cat")).block(WAIT);
            // an hour past the idle timeout with nothing going on but the background process (ping is not activity)
            scheduler.advanceTimeBy(Duration.ofHours(1));
            assertThat(s.ping().block(WAIT).status()).isEqualTo("running");

            p.closeStdin().block(WAIT);
            assertThat(p.exit().block(WAIT).code()).isZero();
            // once it has ended, the session is idle and ends at the next check after its idle timeout
            scheduler.advanceTimeBy(Duration.ofMillis(800));
            assertThatThrownBy(() -> s.ping().block(WAIT))
                    .isInstanceOfSatisfying(
                            SessionClosedException.class,
                            e -> assertThat(e.reason()).isEqualTo(SessionEndReason.IDLE_TIMEOUT));
        } finally {
            s.destroy().onErrorComplete().block(WAIT);
        }
    }
}
