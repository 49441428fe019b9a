package dev.sandbox.implementation.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.FileEvent;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The frames of event streams (NDJSON lines, or SSE {@code data:}): line events, {@code lines} frames (see {@link
 * LineBatch}), the exit, file changes, heartbeats and in-band errors, written on the server and read back into {@link
 * StreamItem}s on the client. This is the hot path of every stream, so line events are written and read byte by byte
 * without a JSON parser; anything not in the compact form written here goes through Jackson's streaming parser.
 */
public final class StreamFrames {
    private static final JsonFactory FACTORY = WireJson.MAPPER.getFactory();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** Content type of newline-delimited JSON streams. */
    public static final String NDJSON = "application/x-ndjson";

    /** Content type of server-sent events. */
    public static final String EVENT_STREAM = "text/event-stream";

    /** Response header of a streaming exec: the unacknowledged bytes the server keeps for a resume. */
    public static final String ACK_WINDOW_HEADER = "Sandbox-Ack-Window";

    /**
     * Request header of exec streams: {@value #BATCH_LINES} asks the server to send runs of whole lines as {@code
     * lines} frames (see {@link LineBatch}) instead of one event per line.
     */
    public static final String BATCH_HEADER = "Sandbox-Batch";

    /** The value of {@link #BATCH_HEADER} that asks for {@code lines} frames. */
    public static final String BATCH_LINES = "lines";

    /** The last event of a stream that ends by itself without an exit (a snapshot of background output). */
    public static final byte[] END_EVENT = "{\"type\":\"end\"}".getBytes(StandardCharsets.US_ASCII);

    /** The heartbeat line of NDJSON streams. */
    public static final byte[] HEARTBEAT = "{\"type\":\"heartbeat\"}".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] STDOUT_PREFIX = "{\"type\":\"stdout\",\"offset\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STDERR_PREFIX = "{\"type\":\"stderr\",\"offset\":".getBytes(StandardCharsets.US_ASCII);
    static final byte[] NEXT = ",\"next\":".getBytes(StandardCharsets.US_ASCII);
    static final byte[] TEXT = ",\"text\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PARTIAL_END = "\",\"partial\":true}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\"}".getBytes(StandardCharsets.US_ASCII);

    private StreamFrames() {}

    // ------------------------------------------------------------------ stream events

    /**
     * Encodes an exec event as one compact JSON object (no newline). Line events are written by hand: they are the
     * hot path of every stream.
     *
     * @param e the event
     * @return the JSON bytes
     */
    public static byte[] event(ExecEvent e) {
        if (e instanceof ExecEvent.Line line) {
            String text = line.text();
            byte[] prefix = line.stream() == ExecEvent.StreamKind.STDOUT ? STDOUT_PREFIX : STDERR_PREFIX;
            byte[] end = line.partial() ? PARTIAL_END : END;
            int digits = digits(line.offset());
            int nextDigits = digits(line.nextOffset());
            byte[] quoted =
                    plainAscii(text) ? null : JsonStringEncoder.getInstance().quoteAsUTF8(text);
            int textLen = quoted == null ? text.length() : quoted.length;
            byte[] out =
                    new byte[prefix.length + digits + NEXT.length + nextDigits + TEXT.length + textLen + end.length];
            int pos = 0;
            System.arraycopy(prefix, 0, out, pos, prefix.length);
            pos += prefix.length;
            writeDigits(line.offset(), out, pos, digits);
            pos += digits;
            System.arraycopy(NEXT, 0, out, pos, NEXT.length);
            pos += NEXT.length;
            writeDigits(line.nextOffset(), out, pos, nextDigits);
            pos += nextDigits;
            System.arraycopy(TEXT, 0, out, pos, TEXT.length);
            pos += TEXT.length;
            if (quoted == null) {
                for (int i = 0; i < textLen; i++) {
                    out[pos + i] = (byte) text.charAt(i);
                }
            } else {
                System.arraycopy(quoted, 0, out, pos, textLen);
            }
            pos += textLen;
            System.arraycopy(end, 0, out, pos, end.length);
            return out;
        }
        if (e instanceof ExecEvent.Chunk c) {
            return chunk(c);
        }
        return WireJson.bytes(ResourceBodies.ExitBody.of((ExecEvent.Exit) e));
    }

    private static final byte[] CHUNK_STDOUT =
            "{\"type\":\"chunk\",\"stream\":\"stdout\",\"offset\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CHUNK_STDERR =
            "{\"type\":\"chunk\",\"stream\":\"stderr\",\"offset\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = ",\"data\":\"".getBytes(StandardCharsets.US_ASCII);

    /**
     * Encodes a chunk of byte output: {@code {"type":"chunk","stream":"stdout","offset":N,"next":M,"data":"<base64>"}}
     * (standard base64 with padding).
     */
    private static byte[] chunk(ExecEvent.Chunk c) {
        byte[] prefix = c.stream() == ExecEvent.StreamKind.STDOUT ? CHUNK_STDOUT : CHUNK_STDERR;
        byte[] data = java.util.Base64.getEncoder().encode(c.bytes());
        ByteArrayOutputStream out = new ByteArrayOutputStream(prefix.length + data.length + 64);
        out.writeBytes(prefix);
        out.writeBytes(Long.toString(c.offset()).getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(NEXT);
        out.writeBytes(Long.toString(c.nextOffset()).getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(DATA);
        out.writeBytes(data);
        out.writeBytes(END);
        return out.toByteArray();
    }

    /**
     * Encodes a file change: {@code {"type":"file","kind":"CREATED","path":"/abs/dir/a"}}.
     *
     * @param e the change
     * @return the JSON bytes
     */
    public static byte[] fileEvent(FileEvent e) {
        return WireJson.bytes(new FileEventBody("file", e.kind(), e.path()));
    }

    /**
     * A file change on the wire.
     *
     * @param type {@code file}
     * @param kind what changed
     * @param path the path that changed
     */
    record FileEventBody(String type, FileEvent.Kind kind, String path) {}

    /**
     * Encodes the first event of a watch: {@code {"type":"ready","path":"/abs/dir"}}, the directory watched.
     *
     * @param path the directory's absolute path
     * @return the JSON bytes
     */
    public static byte[] ready(String path) {
        return WireJson.bytes(new ReadyBody("ready", path));
    }

    /**
     * A watch's first event on the wire.
     *
     * @param type {@code ready}
     * @param path the directory watched
     */
    record ReadyBody(String type, String path) {}

    /**
     * Writes a line event exactly as {@link #event} does, from text that is already JSON-escaped (a line of a {@link
     * LineBatch}).
     *
     * @param out where to write
     * @param stdout whether the line is stdout's
     * @param offset its offset
     * @param next the offset past it
     * @param text the escaped text
     * @param from where the line's text starts
     * @param to where it ends
     */
    public static void lineEvent(Bytes out, boolean stdout, long offset, long next, byte[] text, int from, int to) {
        out.put(stdout ? STDOUT_PREFIX : STDERR_PREFIX, 0, STDOUT_PREFIX.length);
        out.number(offset);
        out.put(NEXT, 0, NEXT.length);
        out.number(next);
        out.put(TEXT, 0, TEXT.length);
        out.put(text, from, to - from);
        out.put(END, 0, END.length);
    }

    /** A growable byte buffer for writing frames. */
    public static final class Bytes {
        private byte[] buf;
        private int len;

        /**
         * Creates a buffer.
         *
         * @param capacity the first capacity
         */
        public Bytes(int capacity) {
            buf = new byte[Math.max(16, capacity)];
        }

        private void room(int n) {
            if (len + n > buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.max(len + n, buf.length * 2));
            }
        }

        /**
         * Appends bytes.
         *
         * @param b the bytes
         * @param off where they start
         * @param n how many
         */
        public void put(byte[] b, int off, int n) {
            room(n);
            System.arraycopy(b, off, buf, len, n);
            len += n;
        }

        /**
         * Appends ASCII text.
         *
         * @param s the text
         */
        public void ascii(String s) {
            room(s.length());
            for (int i = 0; i < s.length(); i++) {
                buf[len++] = (byte) s.charAt(i);
            }
        }

        /**
         * Appends a number in decimal.
         *
         * @param v the number
         */
        public void number(long v) {
            int d = digits(v);
            room(d);
            writeDigits(v, buf, len, d);
            len += d;
        }

        /**
         * The bytes written.
         *
         * @return a copy
         */
        public byte[] toByteArray() {
            return java.util.Arrays.copyOf(buf, len);
        }
    }

    /** Whether a string is printable ASCII without quotes or backslashes: its JSON form is itself. */
    private static boolean plainAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }

    static int digits(long v) {
        if (v < 0) {
            return Long.toString(v).length();
        }
        int n = 1;
        for (long x = v; x >= 10; x /= 10) {
            n++;
        }
        return n;
    }

    static void writeDigits(long v, byte[] out, int pos, int digits) {
        if (v < 0) {
            byte[] s = Long.toString(v).getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(s, 0, out, pos, s.length);
            return;
        }
        long x = v;
        for (int i = pos + digits - 1; i >= pos; i--) {
            out[i] = (byte) ('0' + (x % 10));
            x /= 10;
        }
    }

    /** A decoded stream line: an exec event, a file event, a heartbeat, an error, or something else. */
    public sealed interface StreamItem {}

    /**
     * An exec event from a stream.
     *
     * @param event the event
     */
    public record EventItem(ExecEvent event) implements StreamItem {}

    /**
     * The lines of a {@code lines} frame (see {@link LineBatch}), in order. Iterating decodes them one at a time; two
     * items are equal when their lines are.
     */
    public static final class LinesItem implements StreamItem, Iterable<ExecEvent.Line> {
        private final Iterable<? extends ExecEvent.Line> source;

        /**
         * Wraps lines.
         *
         * @param source the lines, iterable more than once
         */
        public LinesItem(Iterable<? extends ExecEvent.Line> source) {
            this.source = source;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Iterator<ExecEvent.Line> iterator() {
            return (Iterator<ExecEvent.Line>) source.iterator();
        }

        /**
         * Decodes every line.
         *
         * @return the line events
         */
        public List<ExecEvent.Line> lines() {
            List<ExecEvent.Line> all = new ArrayList<>();
            forEach(all::add);
            return all;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof LinesItem other && lines().equals(other.lines());
        }

        @Override
        public int hashCode() {
            return lines().hashCode();
        }

        @Override
        public String toString() {
            return "LinesItem" + lines();
        }
    }

    /**
     * A file change from a watch stream.
     *
     * @param event the change
     */
    public record FileItem(FileEvent event) implements StreamItem {}

    /**
     * An in-band error: the stream failed after it started.
     *
     * @param error the error, as the SDK exception it maps to
     */
    public record ErrorItem(RuntimeException error) implements StreamItem {}

    /**
     * A resource sample from a stats stream, as the server sent it: read into figures by {@link StatsFrames#reading}.
     *
     * @param sample the {@code sample} object of the frame
     */
    public record StatsItem(JsonNode sample) implements StreamItem {}

    /**
     * Any other object (such as {@code heartbeat}, {@code ready} or {@code end}), which readers mostly skip.
     *
     * @param type its type
     * @param path its {@code path} field, if it has one
     */
    public record OtherItem(String type, String path) implements StreamItem {}

    /**
     * Decodes one line of a stream.
     *
     * @param bytes the buffer
     * @param off where the line starts
     * @param len its length, without the newline
     * @return the item
     */
    public static StreamItem streamItem(byte[] bytes, int off, int len) {
        StreamItem fast = fastLine(bytes, off, len);
        if (fast != null) {
            return fast;
        }
        Iterable<ExecEvent.Line> lines = LineBatch.read(bytes, off, len);
        return lines != null ? new LinesItem(lines) : parsed(bytes, off, len);
    }

    /**
     * Reads a line event written exactly as {@link #event} writes it, without a JSON parser: {@code
     * {"type":"stdout","offset":N,"next":M,"text":"..."}} with an optional {@code "partial":true}, and a text with no escapes.
     * Anything else returns {@code null} and goes through the parser.
     */
    private static StreamItem fastLine(byte[] b, int off, int len) {
        int end = off + len;
        LineHead head = lineHead(b, off, end, STDOUT_PREFIX, STDERR_PREFIX);
        if (head == null) {
            return null;
        }
        int pos = head.textStart();
        while (pos < end && b[pos] != '"') {
            if (b[pos] == '\\') {
                return null;
            }
            pos++;
        }
        int textEnd = pos;
        boolean partial;
        if (end - pos == END.length && startsWith(b, pos, end, END)) {
            partial = false;
        } else if (end - pos == PARTIAL_END.length && startsWith(b, pos, end, PARTIAL_END)) {
            partial = true;
        } else {
            return null;
        }
        String text = new String(b, head.textStart(), textEnd - head.textStart(), StandardCharsets.UTF_8);
        return new EventItem(
                head.stdout()
                        ? new ExecEvent.Stdout(text, head.offset(), partial, head.next())
                        : new ExecEvent.Stderr(text, head.offset(), partial, head.next()));
    }

    /**
     * The head that line events and {@code lines} frames share, as written here: {@code <prefix>N,"next":M,"text":"}.
     *
     * @param stdout whether the prefix was stdout's
     * @param offset the number after the prefix
     * @param next the {@code next} number
     * @param textStart where the text starts, just past its opening quote
     */
    record LineHead(boolean stdout, long offset, long next, int textStart) {}

    /**
     * Reads a {@link LineHead} without a JSON parser.
     *
     * @param b the buffer
     * @param off where the object starts
     * @param end where it ends
     * @param stdoutPrefix the opening up to the offset's digits for stdout
     * @param stderrPrefix the same for stderr, as long as the stdout one
     * @return the head, or {@code null} when the object does not start this way
     */
    static LineHead lineHead(byte[] b, int off, int end, byte[] stdoutPrefix, byte[] stderrPrefix) {
        boolean stdout;
        if (startsWith(b, off, end, stdoutPrefix)) {
            stdout = true;
        } else if (startsWith(b, off, end, stderrPrefix)) {
            stdout = false;
        } else {
            return null;
        }
        int pos = off + stdoutPrefix.length;
        int digitsStart = pos;
        long offset = 0;
        while (pos < end && b[pos] >= '0' && b[pos] <= '9' && pos - digitsStart < 18) {
            offset = offset * 10 + (b[pos] - '0');
            pos++;
        }
        if (pos == digitsStart || !startsWith(b, pos, end, NEXT)) {
            return null;
        }
        pos += NEXT.length;
        int nextStart = pos;
        long next = 0;
        while (pos < end && b[pos] >= '0' && b[pos] <= '9' && pos - nextStart < 18) {
            next = next * 10 + (b[pos] - '0');
            pos++;
        }
        if (pos == nextStart || !startsWith(b, pos, end, TEXT)) {
            return null;
        }
        return new LineHead(stdout, offset, next, pos + TEXT.length);
    }

    /** Whether {@code prefix} starts at {@code pos}, within {@code end}. */
    static boolean startsWith(byte[] b, int pos, int end, byte[] prefix) {
        if (end - pos < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (b[pos + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    /** A chunk from the wire, checked: what a server sends is bounded and its offsets agree with its bytes. */
    private static ExecEvent.Chunk chunkOf(String stream, long offset, long next, byte[] data) {
        if (data == null || data.length == 0 || data.length > ExecEvent.Chunk.MAX_BYTES) {
            throw new BackendException(
                    "the server sent a chunk of " + (data == null ? "no" : data.length) + " bytes", null);
        }
        if (offset < 0 || next != offset + data.length) {
            throw new BackendException(
                    "the server sent a chunk whose offsets (" + offset + ", " + next + ") do not match its "
                            + data.length + " bytes",
                    null);
        }
        ExecEvent.StreamKind kind;
        if ("stdout".equals(stream)) {
            kind = ExecEvent.StreamKind.STDOUT;
        } else if ("stderr".equals(stream)) {
            kind = ExecEvent.StreamKind.STDERR;
        } else {
            throw new BackendException("the server sent a chunk of an unknown stream: " + stream, null);
        }
        return new ExecEvent.Chunk(kind, java.nio.ByteBuffer.wrap(data), offset);
    }

    private static StreamItem parsed(byte[] bytes, int off, int len) {
        try (JsonParser p = FACTORY.createParser(bytes, off, len)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new BackendException("the server sent a stream line that is not a JSON object", null);
            }
            String type = null;
            long offset = 0;
            long next = -1;
            String text = null;
            boolean partial = false;
            int code = 0;
            String termination = null;
            long durationNanos = 0;
            String kind = null;
            String stream = null;
            String path = null;
            JsonNode error = null;
            JsonNode sample = null;
            byte[] data = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                switch (name) {
                    case "type" -> type = p.getText();
                    case "offset" -> offset = p.getLongValue();
                    case "next" -> next = p.getLongValue();
                    case "text" -> text = p.getText();
                    case "partial" -> partial = t == JsonToken.VALUE_TRUE;
                    case "code" -> code = p.getIntValue();
                    case "termination" -> termination = p.getText();
                    case "durationNanos" -> durationNanos = p.getLongValue();
                    case "kind" -> kind = p.getText();
                    case "stream" -> stream = p.getText();
                    case "path" -> path = p.getText();
                    case "error" -> error = WireJson.MAPPER.readTree(p);
                    case "sample" -> sample = WireJson.MAPPER.readTree(p);
                    case "data" -> data = p.getBinaryValue();
                    default -> p.skipChildren();
                }
            }
            if (type == null) {
                return new OtherItem("", path);
            }
            return switch (type) {
                case "stdout" -> new EventItem(new ExecEvent.Stdout(text, offset, partial, next));
                case "stderr" -> new EventItem(new ExecEvent.Stderr(text, offset, partial, next));
                case "exit" ->
                    new EventItem(new ExecEvent.Exit(
                            code, ExecEvent.Termination.valueOf(termination), Duration.ofNanos(durationNanos)));
                case "chunk" -> new EventItem(chunkOf(stream, offset, next, data));
                case "lines" -> new LinesItem(LineBatch.split("stdout".equals(stream), offset, next, text));
                case "file" -> new FileItem(new FileEvent(FileEvent.Kind.valueOf(kind), path));
                case "stats" -> new StatsItem(sample == null ? NODES.objectNode() : sample);
                case "error" -> {
                    ObjectNode wrapped = NODES.objectNode();
                    wrapped.set("error", error);
                    yield new ErrorItem(ErrorBodies.exception(wrapped, 500));
                }
                default -> new OtherItem(type, path);
            };
        } catch (IOException | IllegalArgumentException | NullPointerException e) {
            throw new BackendException("the server sent a stream line that cannot be read", e);
        }
    }
}
