package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionStatus;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The behaviour every provider must show, as default test methods: a provider's test class implements this
 * interface and supplies {@link #provider()} (in the style of R2DBC's TestKit). This interface holds the exec
 * tests; background processes, files and lifetimes have their own interfaces, which it extends. Tests only use the public API and
 * commands available in a minimal busybox image ({@code sh}, {@code echo}, {@code printf}, {@code seq}, {@code
 * head}, {@code tr}, {@code cat}, {@code wc}, {@code sleep}, {@code kill}).
 */
public interface SandboxProviderConformance
        extends BackgroundProcessConformance,
                FilesConformance,
                FileMetadataConformance,
                LifetimeConformance,
                PtyConformance,
                SessionEndConformance,
                ExecOutputConformance,
                WatchConformance,
                DirectoryTransferConformance,
                LabelConformance,
                NameConformance,
                PauseConformance,
                PortConformance,
                EgressConformance,
                StatsConformance {

    private SandboxSession newSession() {
        return provider().create(sessionOptions()).block(WAIT);
    }

    private void withSession(java.util.function.Function<SandboxSession, Mono<?>> body) {
        withSession(WAIT, body);
    }

    private void withSession(Duration wait, java.util.function.Function<SandboxSession, Mono<?>> body) {
        provider()
                .withSession(sessionOptions(), s -> body.apply(s).then())
                .then()
                .block(wait);
    }

    private static List<ExecEvent> events(SandboxSession session, ExecOptions options) {
        return session.exec(options).collectList().block(WAIT);
    }

    private static List<String> texts(List<ExecEvent> events, ExecEvent.StreamKind kind) {
        List<String> out = new ArrayList<>();
        for (ExecEvent e : events) {
            if (e instanceof ExecEvent.Line line && line.stream() == kind) {
                out.add(line.text());
            }
        }
        return out;
    }

    private static ExecEvent.Exit exitOf(List<ExecEvent> events) {
        assertThat(events).isNotEmpty();
        assertThat(events.get(events.size() - 1)).isInstanceOf(ExecEvent.Exit.class);
        assertThat(events.stream().filter(e -> e instanceof ExecEvent.Exit)).hasSize(1);
        return (ExecEvent.Exit) events.get(events.size() - 1);
    }

    /** Required: Exec streams lines in order then exactly one exit. */
    @Test
    default void execStreamsLinesInOrderThenExactlyOneExit() {
        withSession(s -> Mono.fromRunnable(() -> {
            List<ExecEvent> ev = events(s, ExecOptions.of("seq", "1", "1000"));
            List<String> expected = new ArrayList<>();
            for (int i = 1; i <= 1000; i++) {
                expected.add(Integer.toString(i));
            }
            assertThat(texts(ev, ExecEvent.StreamKind.STDOUT)).isEqualTo(expected);
            assertThat(exitOf(ev).code()).isZero();
            assertThat(exitOf(ev).termination()).isEqualTo(ExecEvent.Termination.EXITED);
        }));
    }

    /** Required: Stdout and stderr arrive apart with offsets. */
    @Test
    default void stdoutAndStderrArriveApartWithOffsets() {
        withSession(s -> Mono.fromRunnable(() -> {
            List<ExecEvent> ev = events(s, ExecOptions.shell("echo out1; echo err1 >&2; echo out2; echo err22 >&2"));
            assertThat(texts(ev, ExecEvent.StreamKind.STDOUT)).containsExactly("out1", "out2");
            assertThat(texts(ev, ExecEvent.StreamKind.STDERR)).containsExactly("err1", "err22");
            List<Long> errOffsets = ev.stream()
                    .filter(e -> e instanceof ExecEvent.Stderr)
                    .map(e -> ((ExecEvent.Stderr) e).offset())
                    .toList();
            assertThat(errOffsets).containsExactly(0L, 5L);
        }));
    }

    /** Required: Non-zero exit is data not an error. */
    @Test
    default void nonZeroExitIsDataNotAnError() {
        withSession(s -> Mono.fromRunnable(() -> {
            assertThat(exitOf(events(s, ExecOptions.shell("echo x; exit 3"))).code())
                    .isEqualTo(3);
            ExecResult r = s.run(ExecOptions.shell("exit 42")).block(WAIT);
            assertThat(r.exitCode()).isEqualTo(42);
        }));
    }

    /** Required: Killed by signal gives 128 plus the signal. */
    @Test
    default void killedBySignalGives128PlusSignal() {
        withSession(s -> Mono.fromRunnable(() -> {
            ExecEvent.Exit exit = exitOf(events(s, ExecOptions.shell("kill -9 $$")));
            assertThat(exit.code()).isEqualTo(137);
            assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.SIGNALED);
        }));
    }

    /** Required: Last line without newline and CRLF are handled. */
    @Test
    default void lastLineWithoutNewlineAndCrLfAreHandled() {
        withSession(s -> Mono.fromRunnable(() -> {
            List<ExecEvent> ev = events(s, ExecOptions.shell("printf 'a\\r\\nb\\n\\nc'"));
            assertThat(texts(ev, ExecEvent.StreamKind.STDOUT)).containsExactly("a", "b", "", "c");
            List<ExecEvent.Line> lines = ev.stream()
                    .filter(e -> e instanceof ExecEvent.Line)
                    .map(e -> (ExecEvent.Line) e)
                    .toList();
            // every line's next offset counts its terminator: a reader resuming there misses and repeats nothing
            assertThat(lines).extracting(ExecEvent.Line::offset).containsExactly(0L, 3L, 5L, 6L);
            assertThat(lines).extracting(ExecEvent.Line::nextOffset).containsExactly(3L, 5L, 6L, 7L);
        }));
    }

    /** Required: UTF-8 split across reads decodes right. */
    @Test
    default void utf8SplitAcrossReadsDecodesRight() {
        withSession(s -> Mono.fromRunnable(() -> {
            // 'é' is C3 A9 and '€' is E2 82 AC: each is written in two parts with a pause between them (shorter than
            // the partial-line delay, so the line comes whole; ExecOutputConformance covers the pieces)
            List<ExecEvent> ev = events(
                    s,
                    ExecOptions.shell(
                                    "printf 'caf\\303'; sleep 0.3; printf '\\251 \\342\\202'; sleep 0.3; printf '\\254\\n'")
                            .withPartialLineDelay(Duration.ofSeconds(10)));
            assertThat(texts(ev, ExecEvent.StreamKind.STDOUT)).containsExactly("café €");
        }));
    }

    /** Required: Long lines are split and flagged. */
    @Test
    default void longLinesAreSplitAndFlagged() {
        withSession(s -> Mono.fromRunnable(() -> {
            List<ExecEvent> ev = events(
                    s,
                    ExecOptions.shell("head -c 40 /dev/zero | tr '\\0' x; echo; echo short")
                            .withMaxLineLength(16));
            List<ExecEvent.Line> lines = ev.stream()
                    .filter(e -> e instanceof ExecEvent.Line)
                    .map(e -> (ExecEvent.Line) e)
                    .toList();
            assertThat(lines)
                    .extracting(ExecEvent.Line::text)
                    .containsExactly("x".repeat(16), "x".repeat(16), "x".repeat(8), "short");
            assertThat(lines).extracting(ExecEvent.Line::partial).containsExactly(true, true, false, false);
            assertThat(lines).extracting(ExecEvent.Line::offset).containsExactly(0L, 16L, 32L, 41L);
            assertThat(lines).extracting(ExecEvent.Line::nextOffset).containsExactly(16L, 32L, 41L, 47L);
        }));
    }

    /** Required: Timeout kills and keeps partial output. */
    @Test
    default void timeoutKillsAndKeepsPartialOutput() {
        withSession(s -> Mono.fromRunnable(() -> {
            long start = System.nanoTime();
            List<ExecEvent> ev = events(
                    s, ExecOptions.shell("echo before; sleep 30; echo after").withTimeout(Duration.ofMillis(700)));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            assertThat(texts(ev, ExecEvent.StreamKind.STDOUT)).containsExactly("before");
            ExecEvent.Exit exit = exitOf(ev);
            assertThat(exit.code()).isEqualTo(124);
            assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.TIMED_OUT);

            ExecResult r = s.run(ExecOptions.shell("echo partial; sleep 30").withTimeout(Duration.ofMillis(700)))
                    .block(WAIT);
            assertThat(r.exitCode()).isEqualTo(124);
            assertThat(r.timedOut()).isTrue();
            assertThat(r.stdout()).isEqualTo("partial\n");
        }));
    }

    /** Required: Idle timeout kills a silent command. */
    @Test
    default void idleTimeoutKillsASilentCommand() {
        withSession(s -> Mono.fromRunnable(() -> {
            List<ExecEvent> ev = events(
                    s,
                    ExecOptions.shell("echo 1; sleep 0.2; echo 2; sleep 30").withIdleTimeout(Duration.ofMillis(1000)));
            assertThat(texts(ev, ExecEvent.StreamKind.STDOUT)).containsExactly("1", "2");
            ExecEvent.Exit exit = exitOf(ev);
            assertThat(exit.code()).isEqualTo(124);
            assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.IDLE_TIMED_OUT);
        }));
    }

    /** Required: Cancel kills the process and its children. */
    @Test
    default void cancelKillsTheProcessAndItsChildren() {
        withSession(s -> Mono.fromRunnable(() -> {
            // the shell prints its own pid and its background child's pid, then waits
            List<String> pids = s.exec(ExecOptions.shell("sleep 60 & echo $!; echo $$; wait"))
                    .filter(e -> e instanceof ExecEvent.Stdout)
                    .map(e -> ((ExecEvent.Stdout) e).text())
                    .take(2)
                    .collectList()
                    .block(WAIT);
            assertThat(pids).hasSize(2);
            long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            ExecResult alive;
            // alive means present and not a zombie (pid 1 of a container may be slow to reap orphans)
            String check = "for p in " + pids.get(0) + " " + pids.get(1) + "; do"
                    + " if [ -r /proc/$p/stat ] && ! grep -q ') Z ' /proc/$p/stat; then exit 0; fi; done; exit 1";
            do {
                alive = s.run(ExecOptions.shell(check)).block(WAIT);
            } while (alive.exitCode() == 0 && System.nanoTime() < deadline);
            assertThat(alive.exitCode())
                    .as("processes %s still alive 1 s after cancel", pids)
                    .isNotZero();
        }));
    }

    /** Required: Demand is never exceeded. */
    @Test
    default void demandIsNeverExceeded() {
        withSession(s -> Mono.fromRunnable(() -> StepVerifier.create(s.exec(ExecOptions.of("seq", "1", "1000000")), 0)
                .thenRequest(3)
                .expectNextCount(3)
                .expectNoEvent(Duration.ofMillis(300))
                .thenRequest(2)
                .expectNextCount(2)
                .thenCancel()
                .verify(WAIT)));
    }

    /** Required: Twenty megabytes on both streams do not deadlock. */
    @Test
    default void twentyMegabytesOnBothStreamsDoNotDeadlock() {
        // the whole test may take as long as its two steps are each allowed (gVisor makes busybox's tr and fold slow)
        withSession(
                Duration.ofSeconds(240),
                s -> Mono.fromRunnable(() -> {
                    String cmd = "head -c 20000000 /dev/zero | tr '\\0' a | fold -w 99 &"
                            + " head -c 20000000 /dev/zero | tr '\\0' b | fold -w 99 >&2; wait";
                    AtomicLong out = new AtomicLong();
                    AtomicLong err = new AtomicLong();
                    ExecEvent last = s.exec(ExecOptions.shell(cmd))
                            .doOnNext(e -> {
                                if (e instanceof ExecEvent.Stdout o) {
                                    out.addAndGet(o.text().length());
                                } else if (e instanceof ExecEvent.Stderr o) {
                                    err.addAndGet(o.text().length());
                                }
                            })
                            .blockLast(Duration.ofSeconds(120));
                    assertThat(last).isInstanceOf(ExecEvent.Exit.class);
                    assertThat(((ExecEvent.Exit) last).code()).isZero();
                    assertThat(out.get()).isEqualTo(20_000_000L);
                    assertThat(err.get()).isEqualTo(20_000_000L);

                    ExecResult r = s.run(ExecOptions.shell(cmd)).block(Duration.ofSeconds(120));
                    // fold ends every full line with a newline; the last, short line has none
                    assertThat(r.stdoutBytes()).isEqualTo(20_000_000L + 20_000_000L / 99);
                    assertThat(r.stderrBytes()).isEqualTo(20_000_000L + 20_000_000L / 99);
                    assertThat(r.stdoutTruncated()).isTrue();
                    assertThat(r.stdout()).hasSize((int) ExecOptions.DEFAULT_MAX_OUTPUT_BYTES);
                }));
    }

    /** Required: Run keeps text exactly as written and caps the head. */
    @Test
    default void runKeepsTextExactlyAsWrittenAndCapsTheHead() {
        withSession(s -> Mono.fromRunnable(() -> {
            ExecResult r = s.run(ExecOptions.shell("printf 'line1\\r\\nline2'; printf 'warn\\n' >&2"))
                    .block(WAIT);
            assertThat(r.stdout()).isEqualTo("line1\r\nline2");
            assertThat(r.stderr()).isEqualTo("warn\n");
            assertThat(r.stdoutTruncated()).isFalse();
            assertThat(r.stdoutBytes()).isEqualTo(12);

            ExecResult capped = s.run(ExecOptions.shell("head -c 3000 /dev/zero | tr '\\0' x")
                            .withMaxOutputBytes(1000))
                    .block(WAIT);
            assertThat(capped.stdout()).isEqualTo("x".repeat(1000));
            assertThat(capped.stdoutTruncated()).isTrue();
            assertThat(capped.stdoutBytes()).isEqualTo(3000);
            assertThat(capped.duration()).isPositive();
        }));
    }

    /** Required: Stdin is fed with backpressure and closed. */
    @Test
    default void stdinIsFedWithBackpressureAndClosed() {
        withSession(s -> Mono.fromRunnable(() -> {
            ExecResult echo = s.run(ExecOptions.of("cat").withStdin("hello\nworld\n".getBytes(StandardCharsets.UTF_8)))
                    .block(WAIT);
            assertThat(echo.stdout()).isEqualTo("hello\nworld\n");

            Flux<ByteBuffer> fourMiB = Flux.range(0, 64).map(i -> ByteBuffer.wrap(new byte[64 * 1024]));
            ExecResult count =
                    s.run(ExecOptions.shell("wc -c").withStdin(fourMiB)).block(WAIT);
            assertThat(count.stdout().trim()).isEqualTo(Integer.toString(64 * 64 * 1024));

            ExecResult none = s.run(ExecOptions.shell("cat; echo done")).block(WAIT);
            assertThat(none.stdout()).isEqualTo("done\n");
        }));
    }

    /** Required: Environment, cwd and secrets reach the command. */
    @Test
    default void environmentCwdAndSecretsReachTheCommand() {
        SessionOptions options = sessionOptions()
                .withEnv("SESSION_VAR", "s1")
                .withEnv("OVERRIDDEN", "session")
                .withSecret("API_TOKEN", "t0p-secret");
        assertThat(options.toString()).doesNotContain("t0p-secret");
        ExecResult r = provider()
                .withSession(
                        options,
                        s -> s.run(ExecOptions.shell("echo $SESSION_VAR $OVERRIDDEN $API_TOKEN $EXEC_VAR; pwd")
                                .withEnv("OVERRIDDEN", "exec")
                                .withEnv("EXEC_VAR", "e1")
                                .withCwd(otherDirectory())))
                .single()
                .block(WAIT);
        assertThat(r.stdout()).isEqualTo("s1 exec t0p-secret e1\n" + otherDirectory() + "\n");
    }

    /** Required: Bad input is a typed error naming the field. */
    @Test
    default void badInputIsATypedErrorNamingTheField() {
        withSession(s -> Mono.fromRunnable(() -> {
            assertInvalid(s, ExecOptions.of(), "argv");
            assertInvalid(s, ExecOptions.of("echo", "a\0b"), "argv[1]");
            assertInvalid(s, ExecOptions.of("echo", "x".repeat(70 * 1024)), "argv");
            assertInvalid(s, ExecOptions.of("pwd").withCwd("relative/dir"), "cwd");
            assertInvalid(s, ExecOptions.of("pwd").withTimeout(Duration.ZERO), "timeout");
            // the kernel refuses a variable over 128 KiB (the command would exit 126 with nothing said)
            assertInvalid(s, ExecOptions.of("true").withEnv("BIG", "x".repeat(200 * 1024)), "env[BIG]");
            ExecOptions manyVars = ExecOptions.of("true");
            for (int i = 0; i < 10; i++) {
                manyVars = manyVars.withEnv("V" + i, "x".repeat(120 * 1024));
            }
            assertInvalid(s, manyVars, "env");
            StepVerifier.create(s.exec(ExecOptions.of("pwd").withCwd("relative/dir")))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(InvalidArgumentException.class)
                            .hasMessageContaining("relative/dir"))
                    .verify(WAIT);
            StepVerifier.create(s.exec(ExecOptions.of("no-such-program-" + UUID.randomUUID())))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(ProcessLaunchException.class)
                            .hasMessageContaining("no-such-program-"))
                    .verify(WAIT);
        }));
    }

    private static void assertInvalid(SandboxSession s, ExecOptions options, String field) {
        StepVerifier.create(s.exec(options))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(InvalidArgumentException.class);
                    assertThat(((InvalidArgumentException) e).field()).isEqualTo(field);
                    assertThat(e).hasMessageContaining(field);
                })
                .verify(WAIT);
        StepVerifier.create(s.run(options))
                .expectError(InvalidArgumentException.class)
                .verify(WAIT);
    }

    /** Required: Use after close is a typed error naming the session. */
    @Test
    default void useAfterCloseIsATypedErrorNamingTheSession() {
        SandboxSession session = newSession();
        try {
            SandboxSession other = provider().attach(session.id()).block(WAIT);
            session.close().block(WAIT);
            session.close().block(WAIT); // idempotent
            StepVerifier.create(session.exec(ExecOptions.of("true")))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(SessionClosedException.class)
                            .hasMessageContaining(session.id()))
                    .verify(WAIT);
            StepVerifier.create(session.run(ExecOptions.of("true")))
                    .expectError(SessionClosedException.class)
                    .verify(WAIT);
            StepVerifier.create(session.ping())
                    .expectError(SessionClosedException.class)
                    .verify(WAIT);
            // another handle to the same session still works
            assertThat(other.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
            other.destroy().block(WAIT);
            StepVerifier.create(other.exec(ExecOptions.of("true")))
                    .expectError(SessionClosedException.class)
                    .verify(WAIT);
            StepVerifier.create(provider().attach(session.id()))
                    .expectError(SessionNotFoundException.class)
                    .verify(WAIT);
        } finally {
            provider()
                    .attach(session.id())
                    .flatMap(SandboxSession::destroy)
                    .onErrorResume(e -> Mono.empty())
                    .block(WAIT);
        }
    }

    /** Required: Attach to an unknown session fails. */
    @Test
    default void attachToAnUnknownSessionFails() {
        StepVerifier.create(provider().attach("no-such-session-" + UUID.randomUUID()))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(SessionNotFoundException.class)
                        .hasMessageContaining("no-such-session-"))
                .verify(WAIT);
    }

    /** Required: List finds sessions by labels. */
    @Test
    default void listFindsSessionsByLabels() {
        String run = UUID.randomUUID().toString();
        SandboxSession a = provider()
                .create(sessionOptions().withLabel("kit-run", run).withLabel("role", "a"))
                .block(WAIT);
        SandboxSession b = provider()
                .create(sessionOptions().withLabel("kit-run", run).withLabel("role", "b"))
                .block(WAIT);
        try {
            assertThat(provider()
                            .list(Map.of("kit-run", run))
                            .map(SessionInfo::id)
                            .collectList()
                            .block(WAIT))
                    .containsExactlyInAnyOrder(a.id(), b.id());
            assertThat(provider()
                            .list(Map.of("kit-run", run, "role", "b"))
                            .map(SessionInfo::id)
                            .collectList()
                            .block(WAIT))
                    .containsExactly(b.id());
            assertThat(b.labels()).containsEntry("role", "b");
        } finally {
            a.destroy().block(WAIT);
            b.destroy().block(WAIT);
        }
        assertThat(provider().list(Map.of("kit-run", run)).collectList().block(WAIT))
                .isEmpty();
    }

    /** Required: withSession destroys the session when the body ends. */
    @Test
    default void withSessionDestroysTheSessionWhenTheBodyEnds() {
        String[] id = new String[1];
        provider()
                .withSession(sessionOptions(), s -> {
                    id[0] = s.id();
                    return s.exec(ExecOptions.of("seq", "1", "100000"));
                })
                .take(3)
                .blockLast(WAIT);
        // a cancel does not wait for the asynchronous destroy: allow it a few seconds
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        boolean gone = false;
        while (!gone && System.nanoTime() < deadline) {
            gone = provider()
                    .attach(id[0])
                    .map(s -> false)
                    .onErrorResume(SessionNotFoundException.class, e -> Mono.just(true))
                    .block(WAIT);
            if (!gone) {
                Mono.delay(Duration.ofMillis(50)).block();
            }
        }
        assertThat(gone)
                .as("session %s destroyed after the body was cancelled", id[0])
                .isTrue();
        provider()
                .withSession(sessionOptions(), s -> {
                    id[0] = s.id();
                    return s.run(ExecOptions.of("true"));
                })
                .blockLast(WAIT);
        StepVerifier.create(provider().attach(id[0]))
                .expectError(SessionNotFoundException.class)
                .verify(WAIT);
    }

    /** Required: Ping reports status and running execs. */
    @Test
    default void pingReportsStatusAndRunningExecs() {
        withSession(s -> Mono.fromRunnable(() -> {
            SessionStatus idle = s.ping().block(WAIT);
            assertThat(idle.status()).isEqualTo("running");
            assertThat(idle.sessionId()).isEqualTo(s.id());
            assertThat(idle.version()).isNotBlank();
            assertThat(idle.execsRunning()).isZero();
            assertThat(idle.provider()).isEqualTo(provider().name());
            StepVerifier.create(s.exec(ExecOptions.shell("echo started; sleep 30")))
                    .expectNextMatches(
                            e -> e instanceof ExecEvent.Stdout o && o.text().equals("started"))
                    .then(() -> {
                        SessionStatus busy = s.ping().block(WAIT);
                        assertThat(busy.execsRunning()).isEqualTo(1);
                        assertThat(busy.lastActivity()).isAfterOrEqualTo(idle.lastActivity());
                        assertThat(busy.uptimeMs()).isGreaterThanOrEqualTo(idle.uptimeMs());
                    })
                    .thenCancel()
                    .verify(WAIT);
        }));
    }

    /** Required: Restore is unsupported or works. */
    @Test
    default void restoreIsUnsupportedOrWorks() {
        // providers without snapshots answer with a typed error rather than hanging or throwing
        StepVerifier.create(provider().restore("no-such-snapshot", sessionOptions()))
                .expectError(dev.sandbox.SandboxException.class)
                .verify(WAIT);
    }

    /** Required: Session options are validated. */
    @Test
    default void sessionOptionsAreValidated() {
        StepVerifier.create(provider().create(sessionOptions().withWorkdir("not/absolute")))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(InvalidArgumentException.class)
                        .hasMessageContaining("workdir")
                        .hasMessageContaining("not/absolute"))
                .verify(WAIT);
        assertThatThrownBy(() -> sessionOptions().withEnv("BAD=NAME", "x").validate())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("BAD=NAME");
    }
}
