package dev.sandbox.implementation.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.FileEvent;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Stream frames round-trip every event and error, through the fast paths and the JSON parser alike. */
class StreamFramesTest {

    private static StreamFrames.StreamItem roundTrip(byte[] json) {
        // decode from the middle of a larger buffer, as the line splitter does
        byte[] buf = new byte[json.length + 10];
        System.arraycopy(json, 0, buf, 5, json.length);
        return StreamFrames.streamItem(buf, 5, json.length);
    }

    @Test
    void lineEventsRoundTripWhateverTheirText() {
        List<String> texts = List.of(
                "",
                "plain",
                "quote \" and backslash \\ inside",
                "tab\tand\u0001control",
                "café € 𝄞",
                "{\"type\":\"stdout\"}",
                "x".repeat(70_000));
        for (String text : texts) {
            for (ExecEvent e : List.of(
                    new ExecEvent.Stdout(text, 0, false, 1),
                    new ExecEvent.Stderr(text, 123_456_789_012L, true, 123_456_789_099L),
                    new ExecEvent.Stdout(text, 9, true, 12))) {
                byte[] json = StreamFrames.event(e);
                // what the fast path writes is valid JSON that a general parser reads the same
                JsonNode tree = WireJson.lenient(json);
                assertThat(tree).as("valid JSON for %s", e).isNotNull();
                assertThat(tree.path("text").asText()).isEqualTo(text);
                assertThat(roundTrip(json)).isEqualTo(new StreamFrames.EventItem(e));
            }
        }
    }

    @Test
    void chunksRoundTripByteExact() {
        byte[] data = new byte[ExecEvent.Chunk.MAX_BYTES];
        new java.util.Random(7).nextBytes(data);
        for (ExecEvent.Chunk c : List.of(
                new ExecEvent.Chunk(ExecEvent.StreamKind.STDOUT, java.nio.ByteBuffer.wrap(data), 0),
                new ExecEvent.Chunk(
                        ExecEvent.StreamKind.STDERR, java.nio.ByteBuffer.wrap(new byte[] {-1, 0, 10}), 42))) {
            StreamFrames.StreamItem item = roundTrip(StreamFrames.event(c));
            assertThat(item).isInstanceOfSatisfying(StreamFrames.EventItem.class, e -> {
                ExecEvent.Chunk back = (ExecEvent.Chunk) e.event();
                assertThat(back.stream()).isEqualTo(c.stream());
                assertThat(back.offset()).isEqualTo(c.offset());
                assertThat(back.bytes()).isEqualTo(c.bytes());
            });
        }
    }

    @Test
    void aHostileChunkIsABackendError() {
        String big = java.util.Base64.getEncoder().encodeToString(new byte[ExecEvent.Chunk.MAX_BYTES + 1]);
        for (String json : List.of(
                "{\"type\":\"chunk\",\"stream\":\"stdout\",\"offset\":0,\"next\":" + (ExecEvent.Chunk.MAX_BYTES + 1)
                        + ",\"data\":\"" + big + "\"}",
                "{\"type\":\"chunk\",\"stream\":\"stdout\",\"offset\":0,\"next\":9,\"data\":\"AP8K\"}",
                "{\"type\":\"chunk\",\"stream\":\"stdin\",\"offset\":0,\"next\":3,\"data\":\"AP8K\"}",
                "{\"type\":\"chunk\",\"stream\":\"stdout\",\"offset\":-3,\"next\":0,\"data\":\"AP8K\"}",
                "{\"type\":\"chunk\",\"stream\":\"stdout\",\"offset\":0,\"next\":0}")) {
            assertThatThrownBy(() -> roundTrip(json.getBytes(StandardCharsets.UTF_8)))
                    .as(json.length() > 200 ? json.substring(0, 200) : json)
                    .isInstanceOf(BackendException.class);
        }
    }

    @Test
    void fieldsInAnotherOrderGoThroughTheParser() {
        byte[] json = "{\"text\":\"a\\u0041\",\"next\":10,\"offset\":7,\"type\":\"stderr\",\"extra\":[1,{\"b\":2}]}"
                .getBytes(StandardCharsets.UTF_8);
        assertThat(roundTrip(json)).isEqualTo(new StreamFrames.EventItem(new ExecEvent.Stderr("aA", 7, false, 10)));
    }

    @Test
    void exitsAndErrorsRoundTrip() {
        ExecEvent.Exit exit = new ExecEvent.Exit(137, ExecEvent.Termination.SIGNALED, Duration.ofNanos(123_456_789));
        assertThat(roundTrip(StreamFrames.event(exit))).isEqualTo(new StreamFrames.EventItem(exit));

        StreamFrames.StreamItem item = roundTrip(ErrorBodies.errorEvent(ErrorBodies.error(new FileOperationException(
                "a/b", FileOperationException.Reason.NOT_FOUND, "a/b: no such file or directory", null))));
        assertThat(item).isInstanceOf(StreamFrames.ErrorItem.class);
        FileOperationException f = (FileOperationException) ((StreamFrames.ErrorItem) item).error();
        assertThat(f.path()).isEqualTo("a/b");
        assertThat(f.reason()).isEqualTo(FileOperationException.Reason.NOT_FOUND);
        assertThat(f).hasMessage("a/b: no such file or directory");

        RuntimeException closed = ErrorBodies.exception(
                ErrorBodies.error(new SessionClosedException("s-1", SessionEndReason.IDLE_TIMEOUT)), 410);
        assertThat(closed).isInstanceOfSatisfying(SessionClosedException.class, e -> {
            assertThat(e.sessionId()).isEqualTo("s-1");
            assertThat(e.reason()).isEqualTo(SessionEndReason.IDLE_TIMEOUT);
        });
        RuntimeException invalid =
                ErrorBodies.exception(ErrorBodies.error(new InvalidArgumentException("cwd", "cwd is bad")), 400);
        assertThat(((InvalidArgumentException) invalid).field()).isEqualTo("cwd");
        RuntimeException offset = ErrorBodies.exception(
                ErrorBodies.error(new OffsetUnavailableException("p-1", ExecEvent.StreamKind.STDERR, 3, 10, 20)), 416);
        assertThat(offset).isInstanceOfSatisfying(OffsetUnavailableException.class, e -> {
            assertThat(e.stream()).isEqualTo(ExecEvent.StreamKind.STDERR);
            assertThat(e.firstAvailable()).isEqualTo(10);
            assertThat(e.end()).isEqualTo(20);
            assertThat(e.getMessage()).contains("p-1");
        });
    }

    @Test
    void fileEventsAndOtherFramesRoundTrip() {
        FileEvent created = new FileEvent(FileEvent.Kind.CREATED, "/a/b");
        byte[] json = StreamFrames.fileEvent(created);
        assertThat(new String(json, StandardCharsets.UTF_8))
                .isEqualTo("{\"type\":\"file\",\"kind\":\"CREATED\",\"path\":\"/a/b\"}");
        assertThat(roundTrip(json)).isEqualTo(new StreamFrames.FileItem(created));
        assertThat(new String(StreamFrames.ready("/a"), StandardCharsets.UTF_8))
                .isEqualTo("{\"type\":\"ready\",\"path\":\"/a\"}");
        assertThat(roundTrip(StreamFrames.ready("/a"))).isEqualTo(new StreamFrames.OtherItem("ready", "/a"));
        assertThat(roundTrip(StreamFrames.END_EVENT)).isEqualTo(new StreamFrames.OtherItem("end", null));
        assertThat(roundTrip(StreamFrames.HEARTBEAT)).isEqualTo(new StreamFrames.OtherItem("heartbeat", null));
        assertThatThrownBy(() -> roundTrip("[1]".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("not a JSON object");
    }

    @Test
    void linesAreSplitAcrossChunksWhereverTheChunksEnd() {
        StringBuilder all = new StringBuilder();
        for (int i = 0; i < 200; i++) {
            all.append(new String(
                            StreamFrames.event(new ExecEvent.Stdout("line é " + i, i * 10L, false, i * 10L + 10)),
                            StandardCharsets.UTF_8))
                    .append('\n');
        }
        all.append("{\"type\":\"heartbeat\"}\n");
        byte[] bytes = all.toString().getBytes(StandardCharsets.UTF_8);
        for (int chunk : new int[] {1, 3, 7, 64, 1000, bytes.length}) {
            LineSplitter splitter = new LineSplitter();
            List<StreamFrames.StreamItem> items = new java.util.ArrayList<>();
            for (int pos = 0; pos < bytes.length; pos += chunk) {
                byte[] part = java.util.Arrays.copyOfRange(bytes, pos, Math.min(bytes.length, pos + chunk));
                splitter.split(part).forEach(s -> items.add(s.item()));
            }
            assertThat(splitter.pending()).isFalse();
            assertThat(items).hasSize(201);
            assertThat(items.get(150))
                    .isEqualTo(new StreamFrames.EventItem(new ExecEvent.Stdout("line é 150", 1500, false, 1510)));
            assertThat(items.get(200)).isEqualTo(new StreamFrames.OtherItem("heartbeat", null));
        }
    }
}
