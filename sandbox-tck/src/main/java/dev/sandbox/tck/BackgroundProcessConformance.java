package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.SandboxStateException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** Background processes: late and repeated reads from offsets, ring overflow policies, control and stdin. */
public interface BackgroundProcessConformance extends ConformanceBase {

    private static List<String> lines(List<ExecEvent> events, ExecEvent.StreamKind kind) {
        return events.stream()
                .filter(e -> e instanceof ExecEvent.Line l && l.stream() == kind)
                .map(e -> ((ExecEvent.Line) e).text())
                .toList();
    }

    /** Required: Background output can be read late, twice, and from an offset. */
    @Test
    default void backgroundOutputCanBeReadLateTwiceAndFromAnOffset() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.shell("echo line1; echo line2; echo err >&2; echo line3"))
                    .block(WAIT);
            ExecEvent.Exit exit = p.exit().block(WAIT);
            assertThat(exit.code()).isZero();
            assertThat(p.exitNow()).contains(exit);

            for (int read = 0; read < 2; read++) {
                List<ExecEvent> all = p.output(0, 0).collectList().block(WAIT);
                assertThat(lines(all, ExecEvent.StreamKind.STDOUT)).containsExactly("line1", "line2", "line3");
                assertThat(lines(all, ExecEvent.StreamKind.STDERR)).containsExactly("err");
                assertThat(all.get(all.size() - 1)).isEqualTo(exit);
            }
            // "line1\n" and "line2\n" are 12 bytes: resume at the third line, every offset as the events said
            List<ExecEvent> rest = p.output(12, 4).collectList().block(WAIT);
            assertThat(lines(rest, ExecEvent.StreamKind.STDOUT)).containsExactly("line3");
            assertThat(lines(rest, ExecEvent.StreamKind.STDERR)).isEmpty();
            assertThat(((ExecEvent.Line) rest.get(0)).offset()).isEqualTo(12);
        });
    }

    /** Required: Live followers see lines as they arrive. */
    @Test
    default void liveFollowersSeeLinesAsTheyArrive() {
        inSession(s -> {
            // the second line is printed only after the test has seen the first: a follower that got lines only
            // at the end would wait forever (and time out) instead of seeing "first" while the process runs
            BackgroundProcess p = s.start(ExecOptions.shell("echo first; read go; echo second"))
                    .block(WAIT);
            StepVerifier.create(p.output(0, 0))
                    .expectNextMatches(
                            e -> e instanceof ExecEvent.Stdout o && o.text().equals("first"))
                    .then(() -> p.writeStdin(ByteBuffer.wrap("go\n".getBytes(StandardCharsets.UTF_8)))
                            .subscribe())
                    .expectNextMatches(
                            e -> e instanceof ExecEvent.Stdout o && o.text().equals("second"))
                    .expectNextMatches(e -> e instanceof ExecEvent.Exit x && x.code() == 0)
                    .expectComplete()
                    .verify(WAIT);
        });
    }

    /** Required: Dropped offsets are a typed error saying what remains. */
    @Test
    default void droppedOffsetsAreATypedErrorSayingWhatRemains() {
        inSession(s -> {
            BackgroundOptions small = BackgroundOptions.defaults().withRingBytes(BackgroundOptions.MIN_RING_BYTES);
            BackgroundProcess p = s.start(
                            ExecOptions.shell("head -c 200000 /dev/zero | tr '\\0' a | fold -w 99"), small)
                    .block(WAIT);
            p.exit().block(WAIT);
            StepVerifier.create(p.output(0, 0))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(OffsetUnavailableException.class);
                        OffsetUnavailableException o = (OffsetUnavailableException) e;
                        assertThat(o.stream()).isEqualTo(ExecEvent.StreamKind.STDOUT);
                        assertThat(o.requested()).isZero();
                        assertThat(o.end()).isEqualTo(200000 + 200000 / 99);
                        assertThat(o.firstAvailable()).isEqualTo(o.end() - BackgroundOptions.MIN_RING_BYTES);
                        assertThat(e).hasMessageContaining(Long.toString(o.firstAvailable()));
                    })
                    .verify(WAIT);
            assertThatThrownBy(() -> p.collect().block(WAIT)).isInstanceOf(SandboxStateException.class);
            long from = 200000 + 200000 / 99 - 1000;
            List<ExecEvent> tail = p.output(from, 0).collectList().block(WAIT);
            assertThat(((ExecEvent.Line) tail.get(0)).offset()).isEqualTo(from);
            assertThat(tail.get(tail.size() - 1)).isInstanceOf(ExecEvent.Exit.class);
        });
    }

    /** Required: Throttled rings lose nothing and pause the process. */
    @Test
    default void throttledRingsLoseNothingAndPauseTheProcess() {
        inSession(s -> {
            BackgroundOptions throttle = BackgroundOptions.defaults()
                    .withRingBytes(BackgroundOptions.MIN_RING_BYTES)
                    .withOverflow(BackgroundOptions.Overflow.THROTTLE);
            BackgroundProcess p =
                    // far more output than every buffer between the process and this reader can hold
                    s.start(ExecOptions.of("seq", "1", "10000000"), throttle).block(WAIT);
            try {
                // nobody reads: the ring fills and the process waits instead of dropping output
                sleep(500);
                assertThat(p.exitNow()).isEmpty();
                long held = p.snapshot(0, 0).count().block(WAIT);
                assertThat(held).isPositive().isLessThan(20_000);
                // a reader from the start gets every line, in order, well past the ring's size (a line may come in
                // two parts when the reader is at the live edge and seq pauses mid-line, as on a busy machine)
                List<String> first = p.output(0, 0)
                        .ofType(ExecEvent.Stdout.class)
                        .bufferUntil(line -> !line.partial())
                        .map(parts -> String.join(
                                "", parts.stream().map(ExecEvent.Stdout::text).toList()))
                        .take(50_000)
                        .collectList()
                        .block(WAIT);
                assertThat(first)
                        .isEqualTo(IntStream.rangeClosed(1, 50_000)
                                .mapToObj(Integer::toString)
                                .toList());
            } finally {
                p.kill().block(WAIT);
            }
            assertThat(p.exit().block(WAIT).code()).isEqualTo(137);
        });
    }

    /** Required: Full output can be collected once. */
    @Test
    default void fullOutputCanBeCollectedOnce() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.shell("printf 'a\\nb'; printf 'e\\n' >&2; exit 4"))
                    .block(WAIT);
            ExecResult r = p.collect().block(WAIT);
            assertThat(r.stdout()).isEqualTo("a\nb");
            assertThat(r.stderr()).isEqualTo("e\n");
            assertThat(r.exitCode()).isEqualTo(4);
            StepVerifier.create(p.collect())
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(SandboxStateException.class)
                            .hasMessageContaining(p.id())
                            .hasMessageContaining("already collected"))
                    .verify(WAIT);
            // reading by offset still works after collecting
            assertThat(p.output(0, 0).count().block(WAIT)).isEqualTo(4);
        });
    }

    /** Required: Processes are listed and found again by id. */
    @Test
    default void processesAreListedAndFoundAgainById() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.of("sleep", "30")).block(WAIT);
            try {
                List<ProcessInfo> listed = s.processes().collectList().block(WAIT);
                assertThat(listed).extracting(ProcessInfo::id).contains(p.id());
                ProcessInfo info = listed.stream()
                        .filter(i -> i.id().equals(p.id()))
                        .findFirst()
                        .orElseThrow();
                assertThat(info.running()).isTrue();
                assertThat(info.exitCode()).isNull();
                assertThat(info.argv()).containsExactly("sleep", "30");
                BackgroundProcess again = s.process(p.id()).block(WAIT);
                assertThat(again.id()).isEqualTo(p.id());
                again.kill().block(WAIT);
                assertThat(p.exit().block(WAIT).code()).isEqualTo(137);
                ProcessInfo ended =
                        s.processes().filter(i -> i.id().equals(p.id())).blockFirst(WAIT);
                assertThat(ended.running()).isFalse();
                assertThat(ended.exitCode()).isEqualTo(137);
            } finally {
                p.kill().block(WAIT);
            }
            StepVerifier.create(s.process("no-such-process"))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(ProcessNotFoundException.class)
                            .hasMessageContaining("no-such-process"))
                    .verify(WAIT);
        });
    }

    /** Required: Signals reach the process. */
    @Test
    default void signalsReachTheProcess() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.of("sleep", "30")).block(WAIT);
            p.signal(15).block(WAIT);
            ExecEvent.Exit exit = p.exit().block(WAIT);
            assertThat(exit.code()).isEqualTo(143);
            assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.SIGNALED);
            StepVerifier.create(p.signal(0))
                    .expectError(dev.sandbox.InvalidArgumentException.class)
                    .verify(WAIT);
        });
    }

    /** Required: Stdin can be written and closed. */
    @Test
    default void stdinCanBeWrittenAndClosed() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.of("cat")).block(WAIT);
            p.writeStdin(ByteBuffer.wrap("hello\n".getBytes(StandardCharsets.UTF_8)))
                    .block(WAIT);
            ExecEvent first = p.output(0, 0).blockFirst(WAIT);
            assertThat(first).isEqualTo(new ExecEvent.Stdout("hello", 0, false, 6));
            p.writeStdin(ByteBuffer.wrap("world".getBytes(StandardCharsets.UTF_8)))
                    .block(WAIT);
            p.closeStdin().block(WAIT);
            assertThat(p.exit().block(WAIT).code()).isZero();
            assertThat(lines(p.output(0, 0).collectList().block(WAIT), ExecEvent.StreamKind.STDOUT))
                    .containsExactly("hello", "world");
            StepVerifier.create(p.writeStdin(ByteBuffer.wrap(new byte[1])))
                    .expectError(SandboxStateException.class)
                    .verify(WAIT);
        });
    }

    /** Required: Stdin writes fired without waiting arrive in order before the close. */
    @Test
    default void stdinWritesFiredWithoutWaitingArriveInOrderBeforeTheClose() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.of("cat")).block(WAIT);
            // fifteen writes and the close, each subscribed before the previous one completed
            Flux.range(0, 15)
                    .map(i -> p.writeStdin(ByteBuffer.wrap((i + "\n").getBytes(StandardCharsets.UTF_8))))
                    .concatWithValues(p.closeStdin())
                    .flatMap(write -> write, 16)
                    .then()
                    .block(WAIT);
            assertThat(p.exit().block(WAIT).code()).isZero();
            assertThat(lines(p.output(0, 0).collectList().block(WAIT), ExecEvent.StreamKind.STDOUT))
                    .containsExactlyElementsOf(
                            IntStream.range(0, 15).mapToObj(Integer::toString).toList());
        });
    }

    /** Required: Background timeout ends the process with 124. */
    @Test
    default void backgroundTimeoutEndsTheProcessWith124() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.shell("echo up; sleep 30").withTimeout(Duration.ofMillis(500)))
                    .block(WAIT);
            ExecEvent.Exit exit = p.exit().block(WAIT);
            assertThat(exit.code()).isEqualTo(124);
            assertThat(exit.termination()).isEqualTo(ExecEvent.Termination.TIMED_OUT);
            assertThat(lines(p.output(0, 0).collectList().block(WAIT), ExecEvent.StreamKind.STDOUT))
                    .containsExactly("up");
        });
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
