package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SandboxTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Background processes through the blocking facade, with real processes of the local provider. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BackgroundProcessHandleTest {
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

    /** Reads events until {@code count} lines were seen, then closes the stream (which only stops reading). */
    private static List<ExecEvent.Line> firstLines(ProcessOutput output, int count) {
        List<ExecEvent.Line> lines = new ArrayList<>();
        try (output) {
            for (ExecEvent event : output) {
                if (event instanceof ExecEvent.Line line) {
                    lines.add(line);
                    if (lines.size() == count) {
                        break;
                    }
                } else {
                    throw new AssertionError("unexpected " + event + " after " + lines);
                }
            }
        }
        return lines;
    }

    private static List<String> texts(List<? extends ExecEvent> events, ExecEvent.StreamKind kind) {
        return events.stream()
                .filter(e -> e instanceof ExecEvent.Line l && l.stream() == kind)
                .map(e -> ((ExecEvent.Line) e).text())
                .toList();
    }

    @Test
    void outputCanBeReadFromTheStartTwiceAndLateFromAnOffsetWhileTheProcessRuns() {
        BackgroundProcessHandle p = client.process()
                .start(ExecOptions.shell("echo one; echo two; echo oops >&2; read go; echo \"three $go\"; exit 5"));

        assertThat(p.id()).isNotBlank();
        assertThat(p.pid()).isPresent();
        assertThat(p.exitCode()).isNull();
        assertThat(p.exitNow()).isEmpty();
        assertThat(p.running()).isTrue();

        List<ExecEvent.Line> first = firstLines(p.output(0, 0), 3);
        List<ExecEvent.Line> second = firstLines(p.output(0, 0), 3);
        assertThat(texts(first, ExecEvent.StreamKind.STDOUT)).containsExactly("one", "two");
        assertThat(texts(first, ExecEvent.StreamKind.STDERR)).containsExactly("oops");
        assertThat(second).containsExactlyInAnyOrderElementsOf(first);
        ExecEvent.Line two =
                first.stream().filter(l -> l.text().equals("two")).findFirst().orElseThrow();
        assertThat(two.offset()).isEqualTo(4); // "one\n"

        // a late reader resumes from the offset of "two" in stdout, and past everything in stderr
        List<ExecEvent.Line> late = firstLines(p.output(two.offset(), "oops\n".length()), 1);
        assertThat(late).containsExactly(new ExecEvent.Stdout("two", 4, false, 8));

        // closing the readers left the process alone: it still waits for its input
        assertThat(p.exitCode()).isNull();
        p.writeStdin("go\n".getBytes(StandardCharsets.UTF_8));

        ExecEvent.Exit exit = p.exit(WAIT);
        assertThat(exit.code()).isEqualTo(5);
        assertThat(p.exitCode()).isEqualTo(5);
        assertThat(p.exitNow()).contains(exit);
        assertThat(p.running()).isFalse();

        List<ExecEvent> all;
        try (ProcessOutput output = p.output(0, 0)) {
            all = output.stream().toList();
        }
        assertThat(texts(all, ExecEvent.StreamKind.STDOUT)).containsExactly("one", "two", "three go");
        assertThat(all.getLast()).isEqualTo(exit);
    }

    @Test
    void snapshotReturnsWhatIsThereWithoutWaitingForTheEnd() throws Exception {
        BackgroundProcessHandle p = client.process().start(ExecOptions.shell("echo ready; exec sleep 30"));
        List<ExecEvent> now = List.of();
        for (int attempt = 0; attempt < 100 && now.isEmpty(); attempt++) {
            try (ProcessOutput snapshot = p.snapshot(0, 0)) {
                now = snapshot.stream().toList();
            }
            if (now.isEmpty()) {
                Thread.sleep(50);
            }
        }
        assertThat(now).containsExactly(new ExecEvent.Stdout("ready", 0, false, 6));
        assertThat(p.exitCode()).isNull();
        p.kill();
    }

    @Test
    void processesAreListedAndFoundAgainById() {
        BackgroundProcessHandle sleeper = client.process().start(ExecOptions.of("sleep", "30"));
        BackgroundProcessHandle quick = client.process().start(ExecOptions.of("sh", "-c", "exit 3"));
        quick.exit(WAIT);

        List<ProcessInfo> list = client.process().processes();
        assertThat(list).extracting(ProcessInfo::id).containsExactly(sleeper.id(), quick.id());
        assertThat(list.get(0).running()).isTrue();
        assertThat(list.get(0).exitCode()).isNull();
        assertThat(list.get(0).argv()).containsExactly("sleep", "30");
        assertThat(list.get(1).running()).isFalse();
        assertThat(list.get(1).exitCode()).isEqualTo(3);

        BackgroundProcessHandle again = client.process().process(sleeper.id());
        again.kill();
        assertThat(sleeper.exit(WAIT).code()).isEqualTo(137);

        assertThatThrownBy(() -> client.process().process("p-does-not-exist"))
                .isInstanceOf(ProcessNotFoundException.class)
                .hasMessageContaining("p-does-not-exist");
    }

    @Test
    void exitTimesOutWithoutKillingThenKillEndsTheProcess() throws Exception {
        BackgroundProcessHandle p = client.process().start(ExecOptions.of("sleep", "30"));
        long pid = p.pid().orElseThrow();

        assertThatThrownBy(() -> p.exit(Duration.ofMillis(200)))
                .isInstanceOfSatisfying(
                        SandboxTimeoutException.class,
                        e -> assertThat(e.timeout()).isEqualTo(Duration.ofMillis(200)));
        assertThat(p.exitCode()).isNull();
        assertThat(Pids.alive(pid)).isTrue();

        p.kill();
        ExecEvent.Exit exit = p.exit(WAIT);
        assertThat(exit.code()).isEqualTo(137);
        assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.SIGNALED);
        Pids.assertGoneWithin(pid, Duration.ofSeconds(2));
    }

    @Test
    void exitWaitsForTheEndAndExitNowDoesNot() {
        BackgroundProcessHandle p = client.process().start(ExecOptions.shell("read go; exit 4"));
        assertThat(p.exitNow()).isEmpty();

        p.writeStdin("now\n".getBytes(StandardCharsets.UTF_8));
        ExecEvent.Exit exit = p.exit(); // the client's default timeout (30 s here) bounds the wait
        assertThat(exit.code()).isEqualTo(4);
        assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.EXITED);
        assertThat(p.exitNow()).contains(exit);
        assertThat(p.exit()).isEqualTo(exit); // at once, and the same, once it has ended
    }

    @Test
    void signalReachesTheProcess() {
        BackgroundProcessHandle p = client.process().start(ExecOptions.of("sleep", "30"));
        p.signal(15);
        assertThat(p.exit(WAIT).code()).isEqualTo(128 + 15);
        assertThatThrownBy(() -> p.signal(0))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("signal");
    }

    @Test
    void stdinRoundTripThroughCat() {
        BackgroundProcessHandle cat = client.process().start(ExecOptions.of("cat"));
        StringBuilder sent = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            sent.append("line ").append(i).append(" of the round trip\n");
        }
        byte[] bytes = sent.toString().getBytes(StandardCharsets.UTF_8);
        assertThat(bytes.length).isGreaterThan(64 * 1024); // written in several slices
        cat.writeStdin(bytes);
        cat.writeStdin("last\n".getBytes(StandardCharsets.UTF_8));
        cat.closeStdin();

        ExecResult result = cat.collect(WAIT);
        assertThat(result.exitCode()).isZero();
        assertThat(result.stdout()).isEqualTo(sent + "last\n");

        assertThatThrownBy(cat::collect)
                .isInstanceOf(SandboxStateException.class)
                .hasMessageContaining("already collected");
        assertThatThrownBy(() -> cat.writeStdin(new byte[] {1}))
                .isInstanceOf(SandboxStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void anOffsetTheRingDroppedIsATypedErrorThatSaysWhatRemains() {
        BackgroundProcessHandle p = client.process()
                .start(
                        ExecOptions.shell("head -c 300000 /dev/zero | tr '\\0' x | fold -w 99"),
                        BackgroundOptions.defaults().withRingBytes(BackgroundOptions.MIN_RING_BYTES));
        p.exit(WAIT);

        AtomicReference<OffsetUnavailableException> dropped = new AtomicReference<>();
        try (ProcessOutput output = p.output(0, 0)) {
            assertThatThrownBy(() -> output.iterator().hasNext())
                    .isInstanceOfSatisfying(OffsetUnavailableException.class, dropped::set);
        }
        OffsetUnavailableException e = dropped.get();
        assertThat(e.stream()).isEqualTo(ExecEvent.StreamKind.STDOUT);
        assertThat(e.requested()).isZero();
        assertThat(e.end()).isEqualTo(300_000 + 300_000 / 99); // fold adds a newline after every 99 bytes
        assertThat(e.firstAvailable()).isEqualTo(e.end() - BackgroundOptions.MIN_RING_BYTES);

        // resuming from the first offset still held reads to the exit
        List<ExecEvent> rest;
        try (ProcessOutput output = p.output(e.firstAvailable(), 0)) {
            rest = output.stream().toList();
        }
        assertThat(rest.getFirst())
                .isInstanceOfSatisfying(
                        ExecEvent.Stdout.class,
                        first -> assertThat(first.offset()).isEqualTo(e.firstAvailable()));
        assertThat(rest.getLast()).isInstanceOf(ExecEvent.Exit.class);
    }

    @Test
    void aQuietProcessTimesOutTheReaderNotTheProcess() {
        BackgroundProcessHandle p = client.process().start(ExecOptions.shell("echo hi; exec sleep 30"));
        try (ProcessOutput output = p.output(0, 0, Duration.ofMillis(300))) {
            Iterator<ExecEvent> it = output.iterator();
            assertThat(it.next()).isEqualTo(new ExecEvent.Stdout("hi", 0, false, 3));
            assertThatThrownBy(it::hasNext)
                    .isInstanceOfSatisfying(
                            SandboxTimeoutException.class,
                            e -> assertThat(e.timeout()).isEqualTo(Duration.ofMillis(300)));
            assertThat(it.hasNext()).isFalse();
        }
        assertThat(p.running()).isTrue();
        p.kill();
    }

    @Test
    void closingAProcessOutputFromAnotherThreadWakesItsReader() throws Exception {
        BackgroundProcessHandle p = client.process().start(ExecOptions.of("sleep", "30"));
        ProcessOutput output = p.output(0, 0);
        AtomicReference<Boolean> hasNext = new AtomicReference<>();
        Thread reader = new Thread(() -> hasNext.set(output.iterator().hasNext()));
        reader.start();
        Thread.sleep(100);
        output.close();
        reader.join(WAIT.toMillis());

        assertThat(reader.isAlive()).isFalse();
        assertThat(hasNext.get()).isFalse();
        assertThat(p.running()).isTrue();
        p.kill();
    }

    @Test
    void interruptWhileWaitingLeavesTheProcessRunning() throws Exception {
        BackgroundProcessHandle p = client.process().start(ExecOptions.of("sleep", "30"));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            try {
                p.exit(WAIT);
            } catch (RuntimeException e) {
                thrown.set(e);
                flagAfter.set(Thread.currentThread().isInterrupted());
            }
        });
        waiter.start();
        Thread.sleep(100);
        waiter.interrupt();
        waiter.join(WAIT.toMillis());

        assertThat(thrown.get()).isInstanceOf(SandboxInterruptedException.class);
        assertThat(flagAfter.get()).isTrue();
        assertThat(p.running()).isTrue();
        p.kill();
    }

    @Test
    void aProcessEndsWithItsSession() throws Exception {
        SandboxClient other = SandboxClient.local();
        BackgroundProcessHandle p = other.process().start(ExecOptions.of("sleep", "30"));
        long pid = p.pid().orElseThrow();
        other.close();
        Pids.assertGoneWithin(pid, Duration.ofSeconds(2));
        assertThatThrownBy(p::exit).isInstanceOf(dev.sandbox.SessionClosedException.class);
    }
}
