package dev.sandbox.implementation.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code lines} frames: what goes into a batch, and that a frame read from any line yields exactly those lines. */
class LineBatchTest {

    /** Stdout lines of the given texts, each ended by one newline, from {@code start}. */
    private static List<ExecEvent.Line> lines(long start, String... texts) {
        List<ExecEvent.Line> out = new ArrayList<>();
        long at = start;
        for (String t : texts) {
            long next = at + t.getBytes(StandardCharsets.UTF_8).length + 1;
            out.add(new ExecEvent.Stdout(t, at, false, next));
            at = next;
        }
        return out;
    }

    private static LineBatch batch(List<ExecEvent.Line> lines) {
        LineBatch b = LineBatch.of(lines.get(0));
        assertThat(b).isNotNull();
        for (ExecEvent.Line l : lines.subList(1, lines.size())) {
            assertThat(b.append(l)).as("appends %s", l).isTrue();
        }
        return b;
    }

    private static StreamFrames.StreamItem read(byte[] json) {
        byte[] buf = new byte[json.length + 7];
        System.arraycopy(json, 0, buf, 3, json.length);
        return StreamFrames.streamItem(buf, 3, json.length);
    }

    @Test
    void aFrameReadsBackAsItsLinesWhateverTheirText() {
        List<ExecEvent.Line> lines = lines(
                40,
                "",
                "plain",
                "quote \" and backslash \\ inside",
                "tab\tcr\rand\u0001control",
                "café € 𝄞",
                "",
                "{\"type\":\"stdout\"}",
                "x".repeat(5000));
        LineBatch b = batch(lines);
        assertThat(b.lines()).isEqualTo(lines.size());
        assertThat(b.firstOffset()).isEqualTo(40);
        assertThat(b.lastOffset()).isEqualTo(lines.getLast().offset());
        assertThat(b.nextOffset()).isEqualTo(lines.getLast().nextOffset());
        byte[] json = b.frame(-1);
        // valid JSON that a general parser reads the same
        assertThat(WireJson.lenient(json)).isNotNull();
        assertThat(read(json)).isEqualTo(new StreamFrames.LinesItem(lines));
        // and the parser's way: fields in another order
        var tree = (com.fasterxml.jackson.databind.node.ObjectNode) WireJson.lenient(json);
        String reordered = "{\"text\":" + tree.get("text") + ",\"next\":" + tree.get("next") + ",\"offset\":"
                + tree.get("offset") + ",\"stream\":\"stdout\",\"type\":\"lines\"}";
        assertThat(read(reordered.getBytes(StandardCharsets.UTF_8))).isEqualTo(new StreamFrames.LinesItem(lines));
    }

    @Test
    void aFrameStartsAfterTheLastLineTheReaderHas() {
        List<ExecEvent.Line> lines = lines(0, "a", "bé", "", "c\"d", "e");
        LineBatch b = batch(lines);
        for (int i = 0; i < lines.size(); i++) {
            long after = lines.get(i).offset();
            byte[] json = b.frame(after);
            if (i == lines.size() - 1) {
                assertThat(json).as("nothing left after the last line").isNull();
            } else {
                assertThat(read(json)).isEqualTo(new StreamFrames.LinesItem(lines.subList(i + 1, lines.size())));
            }
            // an offset between two lines' starts (the reader's last line is a line before) resumes the same way
            List<long[]> seen = new ArrayList<>();
            b.forEachLine(after, (offset, next, text, from, to) -> seen.add(new long[] {offset, next}));
            assertThat(seen).hasSize(lines.size() - 1 - i);
        }
        assertThat(read(b.frame(-1))).isEqualTo(new StreamFrames.LinesItem(lines));
    }

    @Test
    void onlyWholePlainLinesGoIntoABatch() {
        LineBatch b = batch(lines(10, "a"));
        // not where the batch ends
        assertThat(b.append(new ExecEvent.Stdout("b", 13, false, 15))).isFalse();
        // another stream
        assertThat(b.append(new ExecEvent.Stderr("b", 12, false, 14))).isFalse();
        // a partial line
        assertThat(b.append(new ExecEvent.Stdout("b", 12, true, 13))).isFalse();
        // a line that ended in \r\n (its text is shorter than its bytes)
        assertThat(b.append(new ExecEvent.Stdout("b", 12, false, 15))).isFalse();
        // the last line without a newline
        assertThat(b.append(new ExecEvent.Stdout("b", 12, false, 13))).isFalse();
        // a lone surrogate has no UTF-8 form
        assertThat(b.append(new ExecEvent.Stdout("\uD800", 12, false, 16))).isFalse();
        assertThat(b.lines()).isEqualTo(1);
        assertThat(b.append(new ExecEvent.Stdout("b", 12, false, 14))).isTrue();
        b.seal();
        assertThat(b.append(new ExecEvent.Stdout("c", 14, false, 16))).isFalse();
        assertThat(LineBatch.of(new ExecEvent.Stdout("x", 0, true, 1))).isNull();
    }

    @Test
    void aBatchStopsGrowingPastItsSize() {
        LineBatch b = LineBatch.of(new ExecEvent.Stdout(
                "x".repeat(LineBatch.MAX_TEXT_BYTES - 10), 0, false, LineBatch.MAX_TEXT_BYTES - 9));
        assertThat(b).isNotNull();
        long at = LineBatch.MAX_TEXT_BYTES - 9;
        assertThat(b.append(new ExecEvent.Stdout("y".repeat(20), at, false, at + 21)))
                .isFalse();
    }

    @Test
    void rawAsciiLinesMatchTheirEvents() {
        LineBatch raw = LineBatch.open(true, 5);
        List<ExecEvent.Line> expected = lines(5, "one", "", "tab\there \"q\" \\", "\u0001\u001f");
        for (ExecEvent.Line l : expected) {
            byte[] bytes = ("ab" + l.text() + "cd").getBytes(StandardCharsets.US_ASCII);
            assertThat(raw.appendAscii(bytes, 2, bytes.length - 4)).isTrue();
        }
        assertThat(raw.frame(-1)).isEqualTo(batch(expected).frame(-1));
        assertThat(read(raw.frame(6))).isEqualTo(new StreamFrames.LinesItem(expected.subList(1, expected.size())));
    }

    @Test
    void aFrameThatDoesNotAddUpFailsTheStream() {
        String wrongNext = "{\"type\":\"lines\",\"stream\":\"stdout\",\"offset\":0,\"next\":5,\"text\":\"a\\nb\\n\"}";
        // lines are decoded as they are read: the error comes with the line that does not add up
        StreamFrames.LinesItem wrong = (StreamFrames.LinesItem) read(wrongNext.getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(wrong::lines).isInstanceOf(BackendException.class);
        String unterminated = "{\"type\":\"lines\",\"stream\":\"stderr\",\"offset\":0,\"next\":3,\"text\":\"a\\nb\"}";
        StreamFrames.LinesItem cut = (StreamFrames.LinesItem) read(unterminated.getBytes(StandardCharsets.UTF_8));
        assertThat(cut.iterator().next().text()).isEqualTo("a");
        assertThatThrownBy(cut::lines).isInstanceOf(BackendException.class);
    }
}
