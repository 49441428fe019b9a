package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.PtyOptions;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Pseudo-terminals through the blocking facade, with real shells on real terminals of the local provider. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PtyClientTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private SandboxClient client;

    @BeforeEach
    void open() {
        client = SandboxClient.builder().defaultTimeout(Duration.ofSeconds(30)).local();
    }

    @AfterEach
    void close() {
        client.close();
    }

    /** What a terminal has shown so far, read through its {@link PtyOutput}; every read waits at most its timeout. */
    private static final class Screen {
        private final PtyOutput output;
        private final ByteArrayOutputStream shown = new ByteArrayOutputStream();
        private final byte[] buffer = new byte[4096];

        Screen(PtyOutput output) {
            this.output = output;
        }

        String text() {
            return shown.toString(StandardCharsets.UTF_8);
        }

        /** Reads until {@code expected} has been shown; fails if the output ends first. */
        Screen awaitText(String expected) {
            while (!text().contains(expected)) {
                if (!readSome()) {
                    throw new AssertionError("the terminal's output ended without '" + expected + "': " + text());
                }
            }
            return this;
        }

        /** Reads to the end of the output, that is until the command has ended. */
        String readToEnd() {
            while (readSome()) {
                // keep reading
            }
            return text();
        }

        private boolean readSome() {
            try {
                int n = output.read(buffer);
                if (n < 0) {
                    return false;
                }
                shown.write(buffer, 0, n);
                return true;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Waits until {@code condition} holds, checking every few milliseconds; fails after {@link #WAIT}. */
    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT + ": " + what);
            }
            Thread.sleep(5);
        }
    }

    /** Waits until {@code thread} is parked in a timed wait, which is where a reader waits for output. */
    private static void awaitWaiting(Thread thread) throws InterruptedException {
        await(thread.getName() + " waits", () -> thread.getState() == Thread.State.TIMED_WAITING);
    }

    @Test
    void aShellRunsTypedCommandsSeesItsSizeChangeAndEndsWhenKilled() throws Exception {
        PtySessionHandle shell = client.pty().open(PtyOptions.shell().withSize(90, 20));
        long pid = shell.pid().orElseThrow();
        assertThat(Pids.alive(pid)).isTrue();

        ExecEvent.Exit exit;
        try (PtyOutput output = shell.output(WAIT)) {
            Screen screen = new Screen(output);
            assertThat(output.timeout()).isEqualTo(WAIT);

            // the typed line is echoed as typed; only the shell's answer has the sum worked out
            shell.write("[ -t 0 ] && [ -t 1 ] && echo on-a-$TERM-tty; echo sum-$((40+2))\n");
            screen.awaitText("on-a-xterm-256color-tty").awaitText("sum-42");

            shell.write("stty size\n");
            screen.awaitText("20 90");
            shell.resize(132, 43);
            shell.write("stty size\n");
            screen.awaitText("43 132");

            shell.kill();
            exit = shell.exit(WAIT);
            // the output ends once the shell is gone: the stream reads to its end without being closed
            screen.readToEnd();
            assertThat(output.read()).isEqualTo(-1);
        }
        assertThat(exit.code()).isEqualTo(137);
        assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.SIGNALED);
        Pids.assertGoneWithin(pid, Duration.ofSeconds(2));
        assertThat(client.ping().ptysRunning()).isZero();
    }

    @Test
    void listShowsTheSessionsTerminalsWithTheirPidsAndExits() {
        PtySessionHandle running = client.pty().open(PtyOptions.of("sleep", "30"));
        PtySessionHandle ended = client.pty().open(PtyOptions.of("sh", "-c", "exit 3"));
        assertThat(ended.exit().code()).isEqualTo(3);

        java.util.List<dev.sandbox.ProcessInfo> listed = client.pty().list();
        assertThat(listed).extracting(dev.sandbox.ProcessInfo::id).containsExactly(running.id(), ended.id());
        assertThat(listed.get(0).running()).isTrue();
        assertThat(listed.get(0).pid()).isEqualTo(running.pid().getAsLong());
        assertThat(listed.get(0).argv()).containsExactly("sleep", "30");
        assertThat(listed.get(1).running()).isFalse();
        assertThat(listed.get(1).exitCode()).isEqualTo(3);
        assertThat(client.process().processes()).isEmpty(); // terminals are not background processes
        running.kill();
    }

    @Test
    void exitWaitsForTheCommandAndItsCodeComesBack() {
        PtySessionHandle shell = client.pty().open(PtyOptions.shell());
        shell.write("exit 5\n");

        assertThat(shell.exit().code()).isEqualTo(5);
        assertThat(shell.exit(WAIT).code()).isEqualTo(5); // at once once it has ended
        assertThatThrownBy(() -> shell.write("more\n")).isInstanceOf(SandboxStateException.class);
        try (PtyOutput output = shell.output(WAIT)) {
            assertThat(new Screen(output).readToEnd()).contains("exit 5"); // the replay still holds the typing
        }
    }

    @Test
    void anotherClientAttachesByIdSeesTheRecentOutputAndTypesIntoTheSameTerminal() throws Exception {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create();
                SandboxClient first = SandboxClient.builder()
                        .defaultTimeout(Duration.ofSeconds(30))
                        .create(provider, SessionOptions.defaults())) {
            PtySessionHandle shell = first.pty().open(PtyOptions.shell());
            try (PtyOutput firstOutput = shell.output(WAIT)) {
                Screen firstScreen = new Screen(firstOutput);
                shell.write("echo before-attach-$((1+1))\n");
                firstScreen.awaitText("before-attach-2");

                try (SandboxClient second = SandboxClient.attach(provider, first.sessionId())) {
                    PtySessionHandle again = second.pty().attach(shell.id());
                    assertThat(again.id()).isEqualTo(shell.id());
                    assertThat(again.pid()).isEqualTo(shell.pid());

                    try (PtyOutput secondOutput = again.output(WAIT)) {
                        // what was shown before the second client came is replayed to it
                        Screen secondScreen = new Screen(secondOutput).awaitText("before-attach-2");
                        assertThat(second.ping().ptysAttached()).isEqualTo(2);

                        // its keys reach the same shell, whose answer both readers see
                        again.write("echo from-second-$((3*3))\n");
                        secondScreen.awaitText("from-second-9");
                        firstScreen.awaitText("from-second-9");
                    }
                    // closing the second reader detached it and left the shell running
                    await("the second reader is detached", () -> second.ping().ptysAttached() == 1);
                    assertThat(second.ping().ptysRunning()).isEqualTo(1);

                    // and killing from the second handle ends the terminal the first one waits on
                    again.kill();
                    assertThat(shell.exit(WAIT).code()).isEqualTo(137);
                    firstScreen.readToEnd();
                }
            }
            assertThatThrownBy(() -> first.pty().attach("pty-does-not-exist"))
                    .isInstanceOf(ProcessNotFoundException.class)
                    .hasMessageContaining("pty-does-not-exist");
        }
    }

    @Test
    void writesLargerThanOneSliceArriveWholeAndInOrder() {
        // a raw terminal passes every byte on; the command copies exactly what it gets into a file
        int size = 200_000;
        PtySessionHandle copier = client.pty()
                .open(PtyOptions.of("sh", "-c", "stty raw -echo; echo ready; head -c " + size + " > typed.txt"));
        byte[] typed = new byte[size];
        for (int i = 0; i < size; i++) {
            typed[i] = (byte) (i % 64 == 63 ? '\n' : 'a' + i % 26);
        }
        try (PtyOutput output = copier.output(WAIT)) {
            new Screen(output).awaitText("ready"); // typed bytes now meet a raw terminal
            copier.write(typed); // four slices of up to 64 KiB, each taken as head reads
        }
        assertThat(copier.exit(WAIT).code()).isZero();
        assertThat(client.files().readAllBytes("typed.txt", size)).isEqualTo(typed);
    }

    @Test
    void aQuietTerminalTimesOutTheReaderNotTheCommand() {
        PtySessionHandle quiet = client.pty().open(PtyOptions.of("sh", "-c", "read line; exit 3"));
        try (PtyOutput output = quiet.output(Duration.ofMillis(300))) {
            assertThatThrownBy(() -> new Screen(output).readToEnd())
                    .isInstanceOfSatisfying(
                            SandboxTimeoutException.class,
                            e -> assertThat(e.timeout()).isEqualTo(Duration.ofMillis(300)));
            assertThat(output.read()).isEqualTo(-1); // the timeout ended the reading
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThatThrownBy(() -> quiet.exit(Duration.ofMillis(200)))
                .isInstanceOfSatisfying(
                        SandboxTimeoutException.class,
                        e -> assertThat(e.timeout()).isEqualTo(Duration.ofMillis(200)));

        // neither timeout touched the command: it still reads its line
        quiet.write("go\n");
        assertThat(quiet.exit(WAIT).code()).isEqualTo(3);
    }

    @Test
    void closingTheOutputFromAnotherThreadWakesItsReaderAndOnlyDetaches() throws Exception {
        PtySessionHandle pty = client.pty().open(PtyOptions.of("sh", "-c", "read line; echo got-$line"));
        PtyOutput output = pty.output(WAIT);
        AtomicReference<Integer> read = new AtomicReference<>();
        Thread reader = new Thread(
                () -> {
                    try {
                        read.set(output.read());
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                },
                "pty-reader");
        reader.start();
        awaitWaiting(reader);

        output.close();
        reader.join(WAIT.toMillis());

        assertThat(reader.isAlive()).isFalse();
        assertThat(read.get()).isEqualTo(-1);
        assertThat(output.read()).isEqualTo(-1);
        try (PtyOutput again = pty.output(WAIT)) {
            pty.write("still-here\n");
            new Screen(again).awaitText("got-still-here");
        }
        assertThat(pty.exit(WAIT).code()).isZero();
    }

    @Test
    void anInterruptedReaderGetsItsFlagBackAndTheCommandKeepsRunning() throws Exception {
        PtySessionHandle pty = client.pty().open(PtyOptions.of("sh", "-c", "read line; exit 4"));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        Thread reader = new Thread(
                () -> {
                    try (PtyOutput output = pty.output(WAIT)) {
                        output.read();
                    } catch (Throwable t) {
                        thrown.set(t);
                    }
                    flagAfter.set(Thread.currentThread().isInterrupted());
                },
                "pty-reader");
        reader.start();
        awaitWaiting(reader);

        reader.interrupt();
        reader.join(WAIT.toMillis());

        assertThat(reader.isAlive()).isFalse();
        assertThat(thrown.get())
                .isInstanceOf(SandboxInterruptedException.class)
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(flagAfter).isTrue();
        pty.write("done\n");
        assertThat(pty.exit(WAIT).code()).isEqualTo(4);
    }

    @Test
    void blockingOnANonBlockingThreadFailsAtOnce() {
        assertThatThrownBy(() -> Mono.fromCallable(() -> client.pty().open(PtyOptions.shell()))
                        .subscribeOn(Schedulers.parallel())
                        .block(WAIT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PtyClient.open")
                .hasMessageContaining("parallel");
        PtySessionHandle shell = client.pty().open(PtyOptions.shell());
        assertThatThrownBy(() -> Mono.fromCallable(() -> client.pty().attach(shell.id()))
                        .subscribeOn(Schedulers.parallel())
                        .block(WAIT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PtyClient.attach");
        assertThatThrownBy(() -> Mono.fromCallable(() -> shell.exit(WAIT))
                        .subscribeOn(Schedulers.parallel())
                        .block(WAIT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PtySessionHandle.exit");
        assertThatThrownBy(() -> Mono.fromRunnable(() -> shell.write("true\n"))
                        .subscribeOn(Schedulers.parallel())
                        .block(WAIT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PtySessionHandle.write");
        try (PtyOutput output = shell.output(WAIT)) {
            assertThatThrownBy(() -> Mono.fromCallable(output::read)
                            .subscribeOn(Schedulers.parallel())
                            .block(WAIT))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("PtyOutput.read");
        }
        shell.kill();
        assertThat(shell.exit(WAIT).code()).isEqualTo(137);
    }

    @Test
    void badInputIsATypedError() {
        assertThatThrownBy(() -> client.pty().open(PtyOptions.shell().withSize(0, 24)))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("cols");
        assertThatThrownBy(() -> client.pty().open(PtyOptions.of("no-such-program-for-sure")))
                .isInstanceOf(ProcessLaunchException.class)
                .hasMessageContaining("no-such-program-for-sure");

        PtySessionHandle shell = client.pty().open(PtyOptions.shell());
        assertThatThrownBy(() -> shell.resize(80, 1001))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("rows");
        assertThatThrownBy(() -> shell.signal(0))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("signal");
        assertThatThrownBy(() -> shell.output(-1))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("offset");
        assertThatThrownBy(() -> shell.output(Duration.ZERO))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("timeout");
        shell.kill();
        assertThat(shell.exit(WAIT).code()).isEqualTo(137);
    }

    @Test
    void aSignalReachesTheCommand() {
        PtySessionHandle sleeper = client.pty().open(PtyOptions.of("sleep", "30"));
        sleeper.signal(15);
        ExecEvent.Exit exit = sleeper.exit(WAIT);
        assertThat(exit.code()).isEqualTo(128 + 15);
        assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.SIGNALED);
    }

    @Test
    void aTerminalEndsWithItsSessionAndTheHandleIsClosedWithTheClient() throws Exception {
        SandboxClient other = SandboxClient.local();
        PtySessionHandle shell = other.pty().open(PtyOptions.shell());
        long pid = shell.pid().orElseThrow();
        other.close();

        Pids.assertGoneWithin(pid, Duration.ofSeconds(2));
        assertThatThrownBy(shell::exit).isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> shell.write("x")).isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(shell::output).isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> other.pty().open(PtyOptions.shell())).isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> other.pty().attach(shell.id())).isInstanceOf(SessionClosedException.class);
    }
}
