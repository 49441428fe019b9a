package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxSession;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * Background processes and PTYs of a Docker session live in its agent: another provider instance (another JVM, the
 * CLI run again) attached to the session by id sees them, reads the same output from the same offsets, controls them,
 * and they outlive the provider that started them.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerBackgroundAgentTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

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

    private SandboxSession session() {
        return provider.create(support.sessionOptions(), DockerTestSupport.settings())
                .block(WAIT);
    }

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static List<ExecEvent.Stdout> stdout(List<ExecEvent> events) {
        return events.stream()
                .filter(e -> e instanceof ExecEvent.Stdout)
                .map(e -> (ExecEvent.Stdout) e)
                .toList();
    }

    /** The lines' texts with each partial line joined to the rest of its line. */
    private static List<String> wholeLines(List<ExecEvent.Stdout> lines) {
        List<String> out = new java.util.ArrayList<>();
        StringBuilder pending = new StringBuilder();
        for (ExecEvent.Stdout l : lines) {
            pending.append(l.text());
            if (!l.partial()) {
                out.add(pending.toString());
                pending.setLength(0);
            }
        }
        return out;
    }

    /** Every line starts where the one before ended: nothing lost, nothing twice. */
    private static void assertContiguous(List<ExecEvent.Stdout> lines) {
        long next = 0;
        for (ExecEvent.Stdout l : lines) {
            assertThat(l.offset()).as("offset of '%s'", l.text()).isEqualTo(next);
            next = l.nextOffset();
        }
    }

    @Test
    void aSecondProviderSeesReadsAndFeedsTheSameProcess() {
        SandboxSession first = session();
        try (DockerSandboxProvider other = DockerSandboxProvider.create(DockerTestSupport.settings())) {
            BackgroundProcess p = first.start(ExecOptions.shell(
                            "for i in $(seq 1 300); do echo line$i; done; while read l; do echo got-$l; done"))
                    .block(WAIT);
            assertThat(p.pid()).isPresent();
            assertThat(p.pid().getAsLong()).isPositive();
            SandboxSession second = other.attach(first.id()).block(WAIT);

            ProcessInfo seenFirst =
                    first.processes().filter(i -> i.id().equals(p.id())).blockFirst(WAIT);
            ProcessInfo seenSecond =
                    second.processes().filter(i -> i.id().equals(p.id())).blockFirst(WAIT);
            assertThat(seenSecond).isNotNull();
            assertThat(seenSecond.pid())
                    .isEqualTo(seenFirst.pid())
                    .isEqualTo(p.pid().getAsLong());
            assertThat(seenSecond.argv()).isEqualTo(seenFirst.argv()).isEqualTo(p.argv());
            assertThat(seenSecond.running()).isTrue();

            BackgroundProcess q = second.process(p.id()).block(WAIT);
            assertThat(q.id()).isEqualTo(p.id());
            assertThat(q.pid()).isEqualTo(p.pid());
            assertThat(q.argv()).isEqualTo(p.argv());
            assertThat(q.exitNow()).isEmpty();

            // the same retained output from the same offsets, through either provider
            List<ExecEvent> fromFirst = p.output(0, 0).take(300).collectList().block(WAIT);
            List<ExecEvent> fromSecond = q.output(0, 0).take(300).collectList().block(WAIT);
            assertThat(fromSecond).isEqualTo(fromFirst);
            ExecEvent.Stdout l100 = stdout(fromFirst).get(99);
            assertThat(l100.text()).isEqualTo("line100");
            List<ExecEvent> resumed =
                    q.output(l100.nextOffset(), 0).take(1).collectList().block(WAIT);
            assertThat(resumed).containsExactly(stdout(fromFirst).get(100));

            // a follower on each provider at once; stdin written through the second reaches the process
            CompletableFuture<List<ExecEvent>> readerA =
                    p.output(0, 0).collectList().toFuture();
            CompletableFuture<List<ExecEvent>> readerB =
                    q.output(0, 0).collectList().toFuture();
            for (int i = 0; i < 50; i++) {
                q.writeStdin(text("w" + i + "\n")).block(WAIT);
            }
            q.closeStdin().block(WAIT);
            ExecEvent.Exit exit = p.exit().block(WAIT);
            assertThat(exit.code()).isZero();
            assertThat(q.exit().block(WAIT)).isEqualTo(exit);

            List<String> expected = IntStream.rangeClosed(1, 300)
                    .mapToObj(i -> "line" + i)
                    .collect(java.util.stream.Collectors.toCollection(java.util.ArrayList::new));
            IntStream.range(0, 50).forEach(i -> expected.add("got-w" + i));
            for (CompletableFuture<List<ExecEvent>> reader : List.of(readerA, readerB)) {
                List<ExecEvent> all = reader.join();
                List<ExecEvent.Stdout> lines = stdout(all);
                assertThat(lines).extracting(ExecEvent.Stdout::text).containsExactlyElementsOf(expected);
                assertContiguous(lines);
                assertThat(all.get(all.size() - 1)).isEqualTo(exit);
            }
        } finally {
            first.destroy().block(WAIT);
        }
    }

    @Test
    void aProcessOutlivesTheProviderThatStartedIt() {
        String sessionId;
        String processId;
        long pid;
        DockerSandboxProvider dying = DockerSandboxProvider.create(DockerTestSupport.settings());
        try {
            SandboxSession s = dying.create(support.sessionOptions(), DockerTestSupport.settings())
                    .block(WAIT);
            sessionId = s.id();
            BackgroundProcess p = s.start(ExecOptions.shell(
                            "for i in $(seq 1 2000); do echo n$i; done; echo half >&2; read go; echo after-$go"))
                    .block(WAIT);
            processId = p.id();
            pid = p.pid().getAsLong();
            // wait until the process has written its first part, as seen by the provider that is about to go
            p.output(0, 0).filter(e -> e instanceof ExecEvent.Stderr).blockFirst(WAIT);
        } finally {
            dying.close(); // as a JVM that ends: the process stays in the agent
        }
        SandboxSession third = provider.attach(sessionId).block(WAIT);
        try {
            BackgroundProcess p = third.process(processId).block(WAIT);
            assertThat(p.exitNow()).isEmpty();
            assertThat(p.pid()).hasValue(pid);
            ProcessInfo info =
                    third.processes().filter(i -> i.id().equals(processId)).blockFirst(WAIT);
            assertThat(info.running()).isTrue();

            List<ExecEvent.Stdout> lines =
                    stdout(p.output(0, 0).take(2001).collectList().block(WAIT));
            assertThat(lines)
                    .extracting(ExecEvent.Stdout::text)
                    .containsExactlyElementsOf(IntStream.rangeClosed(1, 2000)
                            .mapToObj(i -> "n" + i)
                            .toList());
            assertContiguous(lines);

            p.writeStdin(text("now\n")).block(WAIT);
            assertThat(p.exit().block(WAIT).code()).isZero();
            List<ExecEvent.Stdout> rest = stdout(
                    p.output(lines.get(1999).nextOffset(), 0).collectList().block(WAIT));
            assertThat(rest).extracting(ExecEvent.Stdout::text).containsExactly("after-now");
        } finally {
            third.destroy().block(WAIT);
        }
    }

    @Test
    void aDroppedOffsetIsTypedThroughAnyProvider() {
        SandboxSession s = session();
        try (DockerSandboxProvider other = DockerSandboxProvider.create(DockerTestSupport.settings())) {
            BackgroundOptions small = BackgroundOptions.defaults().withRingBytes(BackgroundOptions.MIN_RING_BYTES);
            BackgroundProcess p = s.start(
                            ExecOptions.shell("head -c 300000 /dev/zero | tr '\\0' a | fold -w 99"), small)
                    .block(WAIT);
            p.exit().block(WAIT);
            long end = 300000 + 300000 / 99; // fold ends every full line of 99 with a newline
            BackgroundProcess q =
                    other.attach(s.id()).flatMap(again -> again.process(p.id())).block(WAIT);
            assertThat(q.exitNow()).isPresent();
            for (BackgroundProcess reader : List.of(p, q)) {
                StepVerifier.create(reader.output(0, 0))
                        .expectErrorSatisfies(e -> {
                            assertThat(e).isInstanceOf(OffsetUnavailableException.class);
                            OffsetUnavailableException o = (OffsetUnavailableException) e;
                            assertThat(o.stream()).isEqualTo(ExecEvent.StreamKind.STDOUT);
                            assertThat(o.requested()).isZero();
                            assertThat(o.end()).isEqualTo(end);
                            assertThat(o.firstAvailable()).isEqualTo(end - BackgroundOptions.MIN_RING_BYTES);
                        })
                        .verify(WAIT);
            }
            // from the oldest offset held, the tail reads fine
            List<ExecEvent> tail = q.output(end - 1000, 0).collectList().block(WAIT);
            assertThat(((ExecEvent.Line) tail.get(0)).offset()).isEqualTo(end - 1000);
            assertThat(tail.get(tail.size() - 1)).isInstanceOf(ExecEvent.Exit.class);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aThrottledProcessWaitsUntilReadThenGoesOn() throws InterruptedException {
        SandboxSession s = session();
        try (DockerSandboxProvider other = DockerSandboxProvider.create(DockerTestSupport.settings())) {
            BackgroundOptions throttle = BackgroundOptions.defaults()
                    .withRingBytes(BackgroundOptions.MIN_RING_BYTES)
                    .withOverflow(BackgroundOptions.Overflow.THROTTLE);
            BackgroundProcess p =
                    s.start(ExecOptions.of("seq", "1", "10000000"), throttle).block(WAIT);
            try {
                // nobody reads: the held output stops growing once the ring (and the pipe) are full
                long held = heldLines(p);
                for (int i = 0; i < 100; i++) {
                    Thread.sleep(100);
                    long now = heldLines(p);
                    if (now == held) {
                        break;
                    }
                    held = now;
                }
                Thread.sleep(300);
                assertThat(heldLines(p)).as("output while nobody reads").isEqualTo(held);
                assertThat(held).isPositive().isLessThan(20_000);
                assertThat(p.exitNow()).isEmpty();

                // a reader through another provider gets everything from the start, well past the ring
                BackgroundProcess q = other.attach(s.id())
                        .flatMap(again -> again.process(p.id()))
                        .block(WAIT);
                // 60,000 whole lines (a reader at the live edge may get a line in two parts when seq pauses mid-line
                // for longer than the partial-line delay, as on a busy machine)
                long[] whole = {0};
                List<ExecEvent.Stdout> read = stdout(q.output(0, 0)
                        .filter(e -> e instanceof ExecEvent.Stdout)
                        .takeUntil(e -> !((ExecEvent.Stdout) e).partial() && ++whole[0] == 60_000)
                        .collectList()
                        .block(WAIT));
                assertThat(wholeLines(read))
                        .isEqualTo(IntStream.rangeClosed(1, 60_000)
                                .mapToObj(Integer::toString)
                                .toList());
                assertContiguous(read);
                // reading let it go on: there is output past what was read
                // (what the agent had sent to the reader beyond what it took counts as read: it may be gone)
                long after = read.get(read.size() - 1).nextOffset();
                ExecEvent later = p.output(after, 0)
                        .onErrorResume(OffsetUnavailableException.class, e -> p.output(e.firstAvailable(), 0))
                        .blockFirst(WAIT);
                assertThat(later).isInstanceOf(ExecEvent.Stdout.class);
                assertThat(((ExecEvent.Stdout) later).offset()).isGreaterThanOrEqualTo(after);
            } finally {
                p.kill().block(WAIT);
            }
            assertThat(p.exit().block(WAIT).code()).isEqualTo(137);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    private static long heldLines(BackgroundProcess p) {
        return p.snapshot(0, 0).count().block(WAIT);
    }

    @Test
    void aPtyIsAttachedFromAnotherProviderReplayedAndResized() {
        SandboxSession s = session();
        try (DockerSandboxProvider other = DockerSandboxProvider.create(DockerTestSupport.settings())) {
            PtySession pty = s.pty(PtyOptions.shell().withSize(80, 24)).block(WAIT);
            pty.write(text("echo ready-$((20+1))\n")).block(WAIT);
            SandboxSession second = other.attach(s.id()).block(WAIT);
            PtySession again = second.attachPty(pty.id()).block(WAIT);
            assertThat(again.pid()).isEqualTo(pty.pid());

            StringBuffer screen = new StringBuffer();
            Disposable reading =
                    again.output().subscribe(b -> screen.append(StandardCharsets.UTF_8.decode(b.duplicate())));
            try {
                awaitText(screen, "ready-21");
                again.resize(120, 40).block(WAIT);
                again.write(text("stty size\n")).block(WAIT);
                awaitText(screen, "40 120");
            } finally {
                reading.dispose();
            }
            // replay from an offset: the bytes from there on, the same through either provider
            again.write(text("echo mark-$((1+1))\n")).block(WAIT);
            String all = upTo(again.output(0), "mark-2");
            int at = all.indexOf("40 120");
            assertThat(at).isPositive();
            String fromOffset = upTo(pty.output(at), "mark-2");
            assertThat(fromOffset).startsWith("40 120").isEqualTo(all.substring(at));

            again.write(text("exit 3\n")).block(WAIT);
            assertThat(pty.exit().block(WAIT).code()).isEqualTo(3);
            assertThat(again.exit().block(WAIT).code()).isEqualTo(3);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    /** The terminal's bytes (one char each) from the flux's start up to and including a text. */
    private static String upTo(reactor.core.publisher.Flux<ByteBuffer> output, String text) {
        StringBuilder seen = new StringBuilder();
        output.map(b -> StandardCharsets.ISO_8859_1.decode(b.duplicate()).toString())
                .takeUntil(chunk -> seen.append(chunk).indexOf(text) >= 0)
                .then()
                .block(WAIT);
        return seen.substring(0, seen.indexOf(text) + text.length());
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
}
