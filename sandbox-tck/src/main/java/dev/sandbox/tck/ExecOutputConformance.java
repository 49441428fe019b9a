package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * What a command's output looks like besides whole lines: a line without its terminator delivered as a partial line
 * once the command is quiet (a prompt waiting for input), and byte output ({@link ExecOptions#withByteOutput}) as
 * raw chunks with offsets.
 */
public interface ExecOutputConformance extends ConformanceBase {

    private static ByteBuffer utf8(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    /** The line events of one stream, checked to be contiguous from offset 0: each starts where the last ended. */
    private static List<ExecEvent.Line> contiguous(List<ExecEvent> events, ExecEvent.StreamKind kind) {
        List<ExecEvent.Line> lines = new ArrayList<>();
        long at = 0;
        for (ExecEvent e : events) {
            if (e instanceof ExecEvent.Line l && l.stream() == kind) {
                assertThat(l.offset()).as("offset of %s", l).isEqualTo(at);
                int bytes = l.text().getBytes(StandardCharsets.UTF_8).length;
                assertThat(l.nextOffset())
                        .as("next offset of %s", l)
                        .isEqualTo(l.offset() + bytes + (l.partial() ? 0 : 1));
                at = l.nextOffset();
                lines.add(l);
            }
        }
        return lines;
    }

    /** The bytes of one stream's chunks, checked to be contiguous from offset 0. */
    private static byte[] joined(List<ExecEvent> events, ExecEvent.StreamKind kind) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ExecEvent e : events) {
            assertThat(e).isNotInstanceOf(ExecEvent.Line.class);
            if (e instanceof ExecEvent.Chunk c && c.stream() == kind) {
                assertThat(c.offset()).isEqualTo(out.size());
                assertThat(c.size()).isPositive().isLessThanOrEqualTo(ExecEvent.Chunk.MAX_BYTES);
                assertThat(c.nextOffset()).isEqualTo(c.offset() + c.size());
                assertThat(c.data().isReadOnly()).isTrue();
                out.writeBytes(c.bytes());
            }
        }
        return out.toByteArray();
    }

    private static void exitLast(List<ExecEvent> events, int code) {
        assertThat(events).isNotEmpty();
        assertThat(events.get(events.size() - 1))
                .isInstanceOfSatisfying(
                        ExecEvent.Exit.class, x -> assertThat(x.code()).isEqualTo(code));
        assertThat(events.stream().filter(e -> e instanceof ExecEvent.Exit)).hasSize(1);
    }

    /** Required: A prompt without a newline arrives as a partial line before the command gets its input. */
    @Test
    default void promptArrivesAsPartialLineBeforeInputIsSent() {
        inSession(s -> {
            Sinks.Many<ByteBuffer> stdin = Sinks.many().unicast().onBackpressureBuffer();
            List<ExecEvent> seen = new ArrayList<>();
            StepVerifier.create(s.exec(ExecOptions.shell("printf 'Name: '; read x; echo \"hi $x\"")
                            .withStdin(stdin.asFlux())))
                    // the prompt comes while the command still waits for stdin, which nothing has written yet
                    .recordWith(() -> seen)
                    .expectNextMatches(e -> e instanceof ExecEvent.Stdout o
                            && o.partial()
                            && o.text().equals("Name: "))
                    .then(() -> {
                        stdin.tryEmitNext(utf8("Ada\n"));
                        stdin.tryEmitComplete();
                    })
                    .thenConsumeWhile(e -> !(e instanceof ExecEvent.Exit))
                    .expectNextMatches(e -> e instanceof ExecEvent.Exit x && x.code() == 0)
                    .expectComplete()
                    .verify(WAIT);
            List<ExecEvent.Line> lines = contiguous(seen, ExecEvent.StreamKind.STDOUT);
            assertThat(lines.get(0).offset()).isZero();
            assertThat(lines.get(0).nextOffset()).isEqualTo(6);
            assertThat(lines.get(lines.size() - 1).nextOffset()).isEqualTo("Name: hi Ada\n".length());
            StringBuilder text = new StringBuilder();
            lines.forEach(l -> text.append(l.text()));
            assertThat(text.toString()).isEqualTo("Name: hi Ada");
            assertThat(lines.get(lines.size() - 1).partial()).isFalse();
        });
    }

    /** Required: A line written in two halves with a pause between arrives as a partial line and its rest. */
    @Test
    default void lineWrittenInTwoHalvesArrivesAsPartialThenRest() {
        inSession(s -> {
            List<ExecEvent> ev = s.exec(ExecOptions.shell("printf 'first half, '; sleep 0.3; echo 'second half'; "
                            + "printf 'err ' >&2; sleep 0.3; echo end >&2"))
                    .collectList()
                    .block(WAIT);
            exitLast(ev, 0);
            List<ExecEvent.Line> out = contiguous(ev, ExecEvent.StreamKind.STDOUT);
            assertThat(out).extracting(ExecEvent.Line::text).containsExactly("first half, ", "second half");
            assertThat(out).extracting(ExecEvent.Line::partial).containsExactly(true, false);
            List<ExecEvent.Line> err = contiguous(ev, ExecEvent.StreamKind.STDERR);
            assertThat(err).extracting(ExecEvent.Line::text).containsExactly("err ", "end");
            assertThat(err).extracting(ExecEvent.Line::partial).containsExactly(true, false);
        });
    }

    /** Required: A multi-byte character is never split by a partial line, and a delay of zero delivers at once. */
    @Test
    default void partialLinesKeepCharactersWhole() {
        inSession(s -> {
            // "é" is \303\251: the first byte alone, then the second after a pause
            List<ExecEvent> ev = s.exec(ExecOptions.shell("printf 'caf\\303'; sleep 0.3; printf '\\251!\\n'")
                            .withPartialLineDelay(Duration.ZERO))
                    .collectList()
                    .block(WAIT);
            exitLast(ev, 0);
            List<ExecEvent.Line> out = contiguous(ev, ExecEvent.StreamKind.STDOUT);
            assertThat(out.get(0).text()).isEqualTo("caf");
            assertThat(out.get(0).partial()).isTrue();
            StringBuilder text = new StringBuilder();
            out.forEach(l -> text.append(l.text()));
            assertThat(text.toString()).isEqualTo("café!");
            assertThat(text.toString()).doesNotContain("\uFFFD");
        });
    }

    /** Required: Fast line-shaped output has no partial lines. */
    @Test
    default void lineShapedOutputHasNoPartialLines() {
        inSession(s -> {
            List<ExecEvent> ev =
                    s.exec(ExecOptions.of("seq", "1", "20000")).collectList().block(WAIT);
            exitLast(ev, 0);
            List<ExecEvent.Line> out = contiguous(ev, ExecEvent.StreamKind.STDOUT);
            StringBuilder joined = new StringBuilder();
            StringBuilder expected = new StringBuilder();
            for (ExecEvent.Line line : out) {
                joined.append(line.text()).append(line.partial() ? "" : "\n");
            }
            for (int i = 1; i <= 20000; i++) {
                expected.append(i).append('\n');
            }
            assertThat(joined.toString()).isEqualTo(expected.toString());
            // seq writes 4 KiB blocks that end mid-line: a timer that fired on those without a real pause would cut
            // some 27 lines; only a stall of seq itself longer than the delay (a loaded machine) may cut one or two
            assertThat(out.stream().filter(ExecEvent.Line::partial).count())
                    .as("lines cut although seq wrote on")
                    .isLessThanOrEqualTo(2);
        });
    }

    /** Required: A bad partial-line delay is a typed error naming the field. */
    @Test
    default void badPartialLineDelayIsRejected() {
        inSession(s -> {
            for (Duration bad : List.of(Duration.ofMillis(-1), Duration.ofDays(2))) {
                assertThatThrownBy(() -> s.exec(ExecOptions.of("true").withPartialLineDelay(bad))
                                .blockLast(WAIT))
                        .isInstanceOfSatisfying(
                                InvalidArgumentException.class,
                                e -> assertThat(e.field()).isEqualTo("partialLineDelay"))
                        .hasMessageContaining(bad.toString());
            }
        });
    }

    /** Required: A background process's prompt is a partial line for a follower and for a later read. */
    @Test
    default void backgroundPromptIsAPartialLine() {
        inSession(s -> {
            BackgroundProcess p = s.start(ExecOptions.shell("printf 'Password: '; read x; echo \"got $x\""))
                    .block(WAIT);
            StepVerifier.create(p.output(0, 0))
                    .expectNextMatches(e -> e instanceof ExecEvent.Stdout o
                            && o.partial()
                            && o.text().equals("Password: "))
                    .thenCancel()
                    .verify(WAIT);
            // a snapshot from the same offset gives the same bytes; one from past the prompt gives nothing yet
            List<ExecEvent> again = p.snapshot(0, 0).collectList().block(WAIT);
            assertThat(again).containsExactly(new ExecEvent.Stdout("Password: ", 0, true, 10));
            p.writeStdin(utf8("pw\n")).block(WAIT);
            p.closeStdin().block(WAIT);
            assertThat(p.exit().block(WAIT).code()).isZero();
            List<ExecEvent> rest = p.output(10, 0).collectList().block(WAIT);
            assertThat(rest.get(0)).isEqualTo(new ExecEvent.Stdout("got pw", 10, false, 17));
            exitLast(rest, 0);
        });
    }

    /** Required: Byte output arrives byte-exact, stdout and stderr apart, with contiguous offsets, then the exit. */
    @Test
    default void byteOutputIsByteExact() {
        inSession(s -> {
            byte[] data = new byte[200_000];
            new Random(42).nextBytes(data);
            Sinks.Many<ByteBuffer> stdin = Sinks.many().unicast().onBackpressureBuffer();
            stdin.tryEmitNext(ByteBuffer.wrap(data));
            stdin.tryEmitComplete();
            // the bytes go through cat untouched; stderr gets invalid UTF-8 and a lone newline
            List<ExecEvent> ev = s.exec(ExecOptions.shell("cat; printf '\\377\\376\\000\\n\\303' >&2; exit 5")
                            .withStdin(stdin.asFlux())
                            .withByteOutput(true))
                    .collectList()
                    .block(WAIT);
            exitLast(ev, 5);
            assertThat(joined(ev, ExecEvent.StreamKind.STDOUT)).isEqualTo(data);
            assertThat(joined(ev, ExecEvent.StreamKind.STDERR))
                    .isEqualTo(new byte[] {(byte) 0xFF, (byte) 0xFE, 0, '\n', (byte) 0xC3});
        });
    }

    /** Required: A background process started with byte output gives chunks when read, from any offset. */
    @Test
    default void backgroundByteOutputGivesChunks() {
        inSession(s -> {
            BackgroundProcess p = s.start(
                            ExecOptions.shell("printf 'ab\\000\\377\\ncd'").withByteOutput(true))
                    .block(WAIT);
            assertThat(p.exit().block(WAIT).code()).isZero();
            List<ExecEvent> all = p.output(0, 0).collectList().block(WAIT);
            exitLast(all, 0);
            assertThat(joined(all, ExecEvent.StreamKind.STDOUT))
                    .isEqualTo(new byte[] {'a', 'b', 0, (byte) 0xFF, '\n', 'c', 'd'});
            List<ExecEvent> tail = p.output(3, 0).collectList().block(WAIT);
            assertThat(tail.get(0)).isInstanceOfSatisfying(ExecEvent.Chunk.class, c -> {
                assertThat(c.offset()).isEqualTo(3);
                assertThat(c.bytes()).isEqualTo(new byte[] {(byte) 0xFF, '\n', 'c', 'd'});
            });
        });
    }
}
