package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SessionStatus;
import dev.sandbox.UnsupportedFeatureException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** Pseudo-terminals: a real terminal for the command, typed input, resize, replay on attach. */
public interface PtyConformance extends ConformanceBase {

    /**
     * Whether the provider under test has PTYs; without them, asking for one must be a typed error.
     *
     * @return {@code true} unless overridden
     */
    default boolean supportsPty() {
        return true;
    }

    private static ByteBuffer keys(String typed) {
        return ByteBuffer.wrap(typed.getBytes(StandardCharsets.UTF_8));
    }

    /** Collects the terminal's output into a string as it arrives. */
    private static Disposable screen(PtySession pty, StringBuffer into) {
        return pty.output().subscribe(b -> into.append(StandardCharsets.UTF_8.decode(b.duplicate())));
    }

    private static void awaitText(StringBuffer screen, String text) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (screen.indexOf(text) < 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never saw '" + text + "' on the terminal; it shows: " + screen);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** Required: A shell on a terminal runs typed commands. */
    @Test
    default void aShellOnATerminalRunsTypedCommands() {
        inSession(s -> {
            if (!supportsPty()) {
                StepVerifier.create(s.pty(PtyOptions.shell()))
                        .expectError(UnsupportedFeatureException.class)
                        .verify(WAIT);
                return;
            }
            PtySession pty = s.pty(PtyOptions.shell()).block(WAIT);
            StringBuffer screen = new StringBuffer();
            Disposable reading = screen(pty, screen);
            try {
                pty.write(keys("[ -t 0 ] && [ -t 1 ] && echo on-a-$TERM-tty; echo sum-$((40+2))\n"))
                        .block(WAIT);
                awaitText(screen, "on-a-xterm-256color-tty");
                awaitText(screen, "sum-42");
                pty.write(keys("exit 5\n")).block(WAIT);
                ExecEvent.Exit exit = pty.exit().block(WAIT);
                assertThat(exit.code()).isEqualTo(5);
            } finally {
                reading.dispose();
                pty.kill().block(WAIT);
            }
        });
    }

    /** Required: Keys typed without waiting arrive in order. */
    @Test
    default void keysTypedWithoutWaitingArriveInOrder() {
        if (!supportsPty()) {
            return;
        }
        inSession(s -> {
            PtySession pty = s.pty(PtyOptions.shell()).block(WAIT);
            StringBuffer screen = new StringBuffer();
            Disposable reading = screen(pty, screen);
            try {
                // one keystroke per write, each subscribed before the previous one completed
                String typed = "echo typed-$((6*7))-in-order\n";
                Flux.range(0, typed.length())
                        .flatMap(i -> pty.write(keys(typed.substring(i, i + 1))), 16)
                        .then()
                        .block(WAIT);
                awaitText(screen, "typed-42-in-order");
            } finally {
                reading.dispose();
                pty.kill().block(WAIT);
            }
        });
    }

    /** Required: Resize reaches the terminal. */
    @Test
    default void resizeReachesTheTerminal() {
        if (!supportsPty()) {
            return;
        }
        inSession(s -> {
            PtySession pty = s.pty(PtyOptions.shell().withSize(90, 20)).block(WAIT);
            StringBuffer screen = new StringBuffer();
            Disposable reading = screen(pty, screen);
            try {
                pty.write(keys("stty size\n")).block(WAIT);
                awaitText(screen, "20 90");
                pty.resize(132, 43).block(WAIT);
                pty.write(keys("stty size\n")).block(WAIT);
                awaitText(screen, "43 132");
                StepVerifier.create(pty.resize(0, 10))
                        .expectError(InvalidArgumentException.class)
                        .verify(WAIT);
            } finally {
                reading.dispose();
                pty.kill().block(WAIT);
            }
            assertThat(pty.exit().block(WAIT).code()).isEqualTo(137);
        });
    }

    /** Required: Attaching replays recent output and is counted. */
    @Test
    default void attachingReplaysRecentOutputAndIsCounted() {
        if (!supportsPty()) {
            return;
        }
        inSession(s -> {
            PtySession pty = s.pty(PtyOptions.of("sh", "-c", "echo before-attach; sleep 30"))
                    .block(WAIT);
            try {
                // nobody reads yet; a client attaching later still sees what was printed
                PtySession again = s.attachPty(pty.id()).block(WAIT);
                StringBuffer screen = new StringBuffer();
                AtomicReference<Disposable> reading = new AtomicReference<>(screen(again, screen));
                awaitText(screen, "before-attach");
                SessionStatus status = s.ping().block(WAIT);
                assertThat(status.ptysRunning()).isEqualTo(1);
                assertThat(status.ptysAttached()).isEqualTo(1);
                reading.get().dispose();
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                while (s.ping().block(WAIT).ptysAttached() != 0 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(s.ping().block(WAIT).ptysAttached()).isZero();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                pty.kill().block(WAIT);
            }
            assertThat(pty.exit().block(WAIT).code()).isEqualTo(137);
            assertThat(s.ping().block(WAIT).ptysRunning()).isZero();
        });
    }
}
