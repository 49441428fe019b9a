package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionPausedException;
import dev.sandbox.UnsupportedFeatureException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * Pause and resume ({@link SandboxSession#pause()}, {@link SandboxSession#resume()}): a paused session's processes
 * make no progress and lose nothing, its idle clock stops, both calls are idempotent, a call on a paused session
 * resumes it (auto-resume, the default) or fails with {@link SessionPausedException}, and an ended session says so.
 * A provider that cannot pause says so with {@link UnsupportedFeatureException} and keeps working.
 *
 * <pre>{@code
 * class MyProviderConformanceTest implements SandboxProviderConformance {
 *     public boolean supportsPause() { return true; } // includes these, and requires pause to work
 * }
 * }</pre>
 */
public interface PauseConformance extends ConformanceBase {

    /** A counter that prints one number per line, 20 a second, for ever. */
    String COUNTER = "i=0; while true; do echo $i; i=$((i+1)); sleep 0.05; done";

    /**
     * Whether the provider under test can pause a session; when not, pause and resume must be a typed error.
     *
     * @return {@code false} unless overridden
     */
    default boolean supportsPause() {
        return false;
    }

    /**
     * Required: a counter stops advancing while its session is paused (no new line for a second) and continues after
     * resume with no number lost or repeated; or pause and resume are refused as unsupported and the session works on.
     */
    @Test
    default void aPausedCounterStopsAndContinuesWithNoLineLostOrRepeated() {
        inSession(s -> {
            if (!supportsPause()) {
                assertThatThrownBy(() -> s.pause().block(WAIT)).isInstanceOf(UnsupportedFeatureException.class);
                assertThatThrownBy(() -> s.resume().block(WAIT)).isInstanceOf(UnsupportedFeatureException.class);
                assertThat(s.run(ExecOptions.shell("echo on")).block(WAIT).stdout())
                        .isEqualTo("on\n");
                return;
            }
            List<String> lines = new CopyOnWriteArrayList<>();
            Disposable counter = s.exec(ExecOptions.shell(COUNTER))
                    .ofType(ExecEvent.Stdout.class)
                    .subscribe(l -> lines.add(l.text()));
            try {
                awaitLines(lines, 5);
                s.pause().block(WAIT);
                sleep(300); // a line the counter wrote just before the freeze may still be on its way
                int atPause = lines.size();
                assertThat(s.ping().block(WAIT).status()).isEqualTo("paused");
                sleep(1000);
                assertThat(lines).as("lines while paused").hasSize(atPause);
                s.resume().block(WAIT);
                assertThat(s.ping().block(WAIT).status()).isEqualTo("running");
                awaitLines(lines, atPause + 10);
            } finally {
                counter.dispose();
            }
            List<String> seen = new ArrayList<>(lines);
            for (int i = 0; i < seen.size(); i++) {
                assertThat(seen.get(i)).as("line %d of %s", i, seen).isEqualTo(Integer.toString(i));
            }
        });
    }

    /** Required where supported: pausing a paused session and resuming a running one complete and change nothing. */
    @Test
    default void pauseAndResumeAreIdempotent() {
        if (!supportsPause()) {
            return;
        }
        inSession(s -> {
            s.resume().block(WAIT);
            assertThat(s.ping().block(WAIT).status()).isEqualTo("running");
            s.pause().then(s.pause()).block(WAIT);
            s.pause().block(WAIT);
            assertThat(s.ping().block(WAIT).status()).isEqualTo("paused");
            s.resume().then(s.resume()).block(WAIT);
            assertThat(s.ping().block(WAIT).status()).isEqualTo("running");
            assertThat(s.run(ExecOptions.shell("echo on")).block(WAIT).stdout()).isEqualTo("on\n");
        });
    }

    /**
     * Required where supported: with auto-resume (the default) a command and a file read on a paused session resume
     * it and do what they say; without, they fail with {@link SessionPausedException} (a {@link
     * SandboxStateException}) until the session is resumed.
     */
    @Test
    default void aCallOnAPausedSessionResumesItOrFailsTyped() {
        if (!supportsPause()) {
            return;
        }
        inSession(s -> {
            s.files()
                    .write("paused.txt", "kept".getBytes(StandardCharsets.UTF_8))
                    .block(WAIT);
            s.pause().block(WAIT);
            assertThat(s.run(ExecOptions.shell("echo woke")).block(WAIT).stdout())
                    .isEqualTo("woke\n");
            assertThat(s.ping().block(WAIT).status()).isEqualTo("running");
            s.pause().block(WAIT);
            assertThat(new String(s.files().readAllBytes("paused.txt", 1024).block(WAIT), StandardCharsets.UTF_8))
                    .isEqualTo("kept");
            assertThat(s.ping().block(WAIT).status()).isEqualTo("running");
        });
        SandboxSession strict =
                provider().create(sessionOptions().withAutoResume(false)).block(WAIT);
        try {
            strict.pause().block(WAIT);
            assertThatThrownBy(() -> strict.run(ExecOptions.shell("echo no")).block(WAIT))
                    .isInstanceOf(SessionPausedException.class)
                    .isInstanceOf(SandboxStateException.class)
                    .hasMessageContaining("paused");
            assertThatThrownBy(() -> strict.files().readAllBytes("x", 1024).block(WAIT))
                    .isInstanceOf(SessionPausedException.class);
            assertThat(strict.ping().block(WAIT).status()).isEqualTo("paused");
            strict.resume().block(WAIT);
            assertThat(strict.run(ExecOptions.shell("echo yes")).block(WAIT).stdout())
                    .isEqualTo("yes\n");
        } finally {
            strict.destroy().block(WAIT);
        }
    }

    /**
     * Required where supported: a paused session's idle clock stops (paused twice as long as its idle timeout, it
     * still lives), and starts again on resume.
     */
    @Test
    default void aPausedSessionIsNotEndedAsIdle() {
        if (!supportsPause()) {
            return;
        }
        SandboxSession s = provider()
                .create(sessionOptions().withIdleTimeout(Duration.ofSeconds(1)))
                .block(WAIT);
        try {
            s.pause().block(WAIT);
            sleep(2500);
            assertThat(s.ping().block(WAIT).status()).isEqualTo("paused");
            s.resume().block(WAIT);
            assertThat(s.run(ExecOptions.shell("echo alive")).block(WAIT).stdout())
                    .isEqualTo("alive\n");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    /** Required: a paused session can be destroyed; an ended session's pause and resume fail as closed. */
    @Test
    default void aPausedSessionIsDestroyedAndAnEndedOneCannotBePaused() {
        SandboxSession s = provider().create(sessionOptions()).block(WAIT);
        boolean paused = false;
        try {
            if (supportsPause()) {
                s.pause().block(WAIT);
                paused = true;
            }
        } finally {
            s.destroy().block(WAIT);
        }
        assertThat(provider()
                        .list(java.util.Map.of())
                        .map(i -> i.id())
                        .collectList()
                        .block(WAIT))
                .as("destroyed while paused: %s", paused)
                .doesNotContain(s.id());
        // a provider without pauses may say that first
        Class<?> unsupported = supportsPause() ? SessionClosedException.class : UnsupportedFeatureException.class;
        assertThatThrownBy(() -> s.pause().block(WAIT)).isInstanceOfAny(SessionClosedException.class, unsupported);
        assertThatThrownBy(() -> s.resume().block(WAIT)).isInstanceOfAny(SessionClosedException.class, unsupported);
    }

    private static void awaitLines(List<String> lines, int count) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (lines.size() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + lines.size() + " lines, waited for " + count + ": " + lines);
            }
            sleep(20);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
