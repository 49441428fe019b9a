package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ProcessInfo;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * How a session ends and what its handles and processes say then, and what a session tells of its processes: a
 * destroy through a closed handle, the reason {@link SessionEndReason#DESTROYED} everywhere, the pids of background
 * processes and PTYs, the listing of PTYs, and a resize right after a PTY starts. The PTY steps follow {@link
 * #supportsPty()}.
 */
public interface SessionEndConformance extends PtyConformance {

    private static void expectDestroyed(Supplier<? extends org.reactivestreams.Publisher<?>> op) {
        assertThatThrownBy(() -> Flux.from(op.get()).blockLast(WAIT))
                .isInstanceOf(SessionClosedException.class)
                .extracting(e -> ((SessionClosedException) e).reason())
                .isEqualTo(SessionEndReason.DESTROYED);
    }

    private List<String> listedIds() {
        return provider().list(Map.of()).map(SessionInfo::id).collectList().block(WAIT);
    }

    /** Collects the terminal's output into a string as it arrives. */
    private static Disposable screen(PtySession pty, StringBuffer into) {
        return pty.output().subscribe(b -> into.append(StandardCharsets.UTF_8.decode(b.duplicate())));
    }

    private static Matcher awaitMatch(StringBuffer screen, Pattern pattern) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            Matcher m = pattern.matcher(screen);
            if (m.find()) {
                return m;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never saw " + pattern + " on the terminal; it shows: " + screen);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** Required: destroy() on a closed handle still ends the sandbox, and the handle then says DESTROYED. */
    @Test
    default void destroyThroughAClosedHandleEndsTheSandbox() {
        SandboxSession s = provider().create(sessionOptions()).block(WAIT);
        String id = s.id();
        try {
            s.close().block(WAIT);
            assertThatThrownBy(() -> s.ping().block(WAIT))
                    .isInstanceOf(SessionClosedException.class)
                    .extracting(e -> ((SessionClosedException) e).reason())
                    .isEqualTo(SessionEndReason.HANDLE_CLOSED);
            s.destroy().block(WAIT);

            assertThat(listedIds()).doesNotContain(id);
            assertThatThrownBy(() -> provider().attach(id).block(WAIT))
                    .isInstanceOf(dev.sandbox.SandboxException.class);
            expectDestroyed(() -> s.exec(ExecOptions.of("true")));
            expectDestroyed(s::ping);
            expectDestroyed(() -> s.files().list("."));
            s.destroy().block(WAIT); // idempotent
        } finally {
            // the session must not outlive the test even when destroy() did nothing
            provider()
                    .attach(id)
                    .flatMap(SandboxSession::destroy)
                    .onErrorResume(e -> Mono.empty())
                    .block(WAIT);
        }
    }

    /** Required: after destroy() every operation on the handle, and on another handle to it, says DESTROYED. */
    @Test
    default void aDestroyedSessionsHandlesSayDestroyed() {
        SandboxSession s = provider().create(sessionOptions()).block(WAIT);
        SandboxSession other = provider().attach(s.id()).block(WAIT);
        s.destroy().block(WAIT);
        expectDestroyed(() -> s.run(ExecOptions.of("true")));
        expectDestroyed(s::processes);
        expectDestroyed(() -> other.run(ExecOptions.of("true")));
        other.close().block(WAIT);
        assertThat(listedIds()).doesNotContain(s.id());
    }

    /**
     * Required: a command, a background process and a PTY running when their session is destroyed end with
     * DESTROYED, not with an exit code a kill -9 would give.
     */
    @Test
    default void whatRunsWhenTheSessionIsDestroyedEndsWithDestroyed() {
        SandboxSession s = provider().create(sessionOptions()).block(WAIT);
        try {
            CompletableFuture<Throwable> execEnd = new CompletableFuture<>();
            CompletableFuture<Void> up = new CompletableFuture<>();
            s.exec(ExecOptions.shell("echo up; sleep 30"))
                    .subscribe(
                            e -> {
                                if (e instanceof ExecEvent.Line l && l.text().equals("up")) {
                                    up.complete(null);
                                }
                            },
                            execEnd::complete,
                            () -> execEnd.complete(null));
            BackgroundProcess bg = s.start(ExecOptions.of("sleep", "30")).block(WAIT);
            PtySession pty = supportsPty() ? s.pty(PtyOptions.of("sleep", "30")).block(WAIT) : null;
            up.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

            s.destroy().block(WAIT);

            Throwable execError = execEnd.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(execError).as("the exec stream's end").isInstanceOf(SessionClosedException.class);
            assertThat(((SessionClosedException) execError).reason()).isEqualTo(SessionEndReason.DESTROYED);
            expectDestroyed(bg::exit);
            if (pty != null) {
                expectDestroyed(pty::exit);
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        } finally {
            s.destroy().onErrorResume(e -> Mono.empty()).block(WAIT);
        }
    }

    /** Required: a background process's pid is its pid inside the sandbox, in pid() and in processes(). */
    @Test
    default void aBackgroundProcessKnowsItsPid() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.shell("echo $$; sleep 5")).block(WAIT);
            String printed = p.output(0, 0)
                    .ofType(ExecEvent.Line.class)
                    .next()
                    .map(ExecEvent.Line::text)
                    .block(WAIT);
            assertThat(p.pid()).isPresent();
            assertThat(p.pid().getAsLong()).isPositive().isEqualTo(Long.parseLong(printed.trim()));
            ProcessInfo listed =
                    s.processes().filter(i -> i.id().equals(p.id())).next().block(WAIT);
            assertThat(listed).isNotNull();
            assertThat(listed.pid()).isEqualTo(p.pid().getAsLong());
            p.kill().block(WAIT);
        });
    }

    /** Required: a PTY's pid is its command's pid inside the sandbox, and ptys() lists it while processes() does not. */
    @Test
    default void aPtyKnowsItsPidAndIsListed() {
        if (!supportsPty()) {
            return;
        }
        inSession(s -> {
            PtySession pty =
                    s.pty(PtyOptions.of("sh", "-c", "echo pid=$$.; sleep 5")).block(WAIT);
            StringBuffer screen = new StringBuffer();
            Disposable reading = screen(pty, screen);
            try {
                Matcher m = awaitMatch(screen, Pattern.compile("pid=(\\d+)\\."));
                assertThat(pty.pid()).isPresent();
                assertThat(pty.pid().getAsLong()).isPositive().isEqualTo(Long.parseLong(m.group(1)));

                List<ProcessInfo> ptys = s.ptys().collectList().block(WAIT);
                assertThat(ptys)
                        .filteredOn(i -> i.id().equals(pty.id()))
                        .singleElement()
                        .satisfies(i -> {
                            assertThat(i.running()).isTrue();
                            assertThat(i.pid()).isEqualTo(pty.pid().getAsLong());
                            assertThat(i.argv()).containsExactly("sh", "-c", "echo pid=$$.; sleep 5");
                        });
                assertThat(s.processes().map(ProcessInfo::id).collectList().block(WAIT))
                        .doesNotContain(pty.id());
            } finally {
                reading.dispose();
                pty.kill().block(WAIT);
            }
        });
    }

    /** Required: a resize sent at once after the PTY was created is the size the command sees. */
    @Test
    default void aResizeRightAfterThePtyStartsIsKept() {
        if (!supportsPty()) {
            return;
        }
        inSession(s -> {
            for (int i = 0; i < 10; i++) {
                int cols = 101 + i;
                int rows = 31 + i;
                PtySession pty = s.pty(PtyOptions.shell()).block(WAIT);
                StringBuffer screen = new StringBuffer();
                Disposable reading = screen(pty, screen);
                try {
                    pty.resize(cols, rows).block(WAIT);
                    pty.write(ByteBuffer.wrap("stty size; exit\n".getBytes(StandardCharsets.UTF_8)))
                            .block(WAIT);
                    // the shell's prompt may come before or after the echo of the typed line: find the answer
                    Matcher m = awaitMatch(screen, Pattern.compile("(?<![\\d.])(\\d+) (\\d+)\\r?\\n"));
                    assertThat(m.group(1) + " " + m.group(2))
                            .as("stty size after resize %d of 10", i + 1)
                            .isEqualTo(rows + " " + cols);
                    pty.exit().block(WAIT);
                } finally {
                    reading.dispose();
                    pty.kill().onErrorResume(e -> Mono.empty()).block(WAIT);
                }
            }
        });
    }
}
