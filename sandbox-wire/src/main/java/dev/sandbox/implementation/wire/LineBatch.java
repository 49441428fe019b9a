package dev.sandbox.implementation.wire;

import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.implementation.exec.LazyIterator;
import dev.sandbox.implementation.exec.LineRun;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Consecutive whole lines of one stream, kept as the JSON-escaped text of a {@code lines} frame:
 *
 * <pre>{@code
 * {"type":"lines","stream":"stdout","offset":0,"next":6,"text":"1\n2\n3\n"}
 * }</pre>
 *
 * <p>Every line of the text is followed by an escaped newline ({@code \n} in the JSON string, which no line's own
 * text contains), the first line starts at byte {@code offset} of its stream, and each line takes exactly the UTF-8
 * bytes of its text plus one newline byte, so each line's offset and next offset follow from the text alone and
 * {@code next} is the offset just past the last line. Only lines that satisfy this go into a batch ({@link #append});
 * any other line (a partial line, one that ended in {@code \r\n}, one decoded from another charset or with malformed
 * bytes) travels as its own {@code stdout}/{@code stderr} event. A batch can be read from any of its lines
 * ({@link #frame}, {@link #forEachLine}), which is how a stream resumes in the middle of one.
 *
 * <p>Not thread-safe: the owner guards it.
 */
public final class LineBatch implements LineRun {
    /** A batch takes no more lines once its text is this long. */
    public static final int MAX_TEXT_BYTES = 32 * 1024;

    /** Makes batches for a session's framer (see {@code BatchedExec#execBatches}). */
    public static final LineRun.Factory<LineBatch> RUNS = new LineRun.Factory<>() {
        @Override
        public boolean plainLineAt(byte[] b, int pos, int maxLine) {
            return LineBatch.plainLineAt(b, pos, maxLine);
        }

        @Override
        public LineBatch open(boolean stdout, long offset, int capacity) {
            return LineBatch.open(stdout, offset, capacity);
        }

        @Override
        public LineBatch of(ExecEvent.Line line) {
            return LineBatch.of(line);
        }
    };

    private static final byte[] STDOUT_HEAD =
            "{\"type\":\"lines\",\"stream\":\"stdout\",\"offset\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STDERR_HEAD =
            "{\"type\":\"lines\",\"stream\":\"stderr\",\"offset\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private final boolean stdout;
    private final long first;
    private long lastOffset;
    private long next;
    private byte[] text;
    private int length;
    private int lines;
    private boolean sealed;

    private LineBatch(boolean stdout, long first, int capacity) {
        this.stdout = stdout;
        this.first = first;
        this.next = first;
        this.lastOffset = first;
        this.text = new byte[capacity];
    }

    /**
     * Starts a batch with a line.
     *
     * @param line the line
     * @return the batch, or {@code null} when the line cannot go into one
     */
    public static LineBatch of(ExecEvent.Line line) {
        LineBatch b = new LineBatch(
                line.stream() == ExecEvent.StreamKind.STDOUT,
                line.offset(),
                Math.min(2 * MAX_TEXT_BYTES, Math.max(256, line.text().length() + 16)));
        return b.append(line) ? b : null;
    }

    /**
     * Adds a line at the end when it continues this batch (same stream, starting where the last line ended), is a
     * whole line of the batch's shape (see the class comment) and the batch still has room.
     *
     * @param line the line
     * @return whether it was added
     */
    @Override
    public boolean append(ExecEvent.Line line) {
        if (sealed
                || line.partial()
                || line.offset() != next
                || (line.stream() == ExecEvent.StreamKind.STDOUT) != stdout
                || (lines > 0 && length + line.text().length() > MAX_TEXT_BYTES)) {
            return false;
        }
        String s = line.text();
        int n = s.length();
        if (length + 6L * n + 2 > text.length) {
            long want = Math.max(length + 6L * n + 2, Math.min(2L * text.length, 2L * MAX_TEXT_BYTES));
            if (want > Integer.MAX_VALUE - 16) {
                return false;
            }
            text = Arrays.copyOf(text, (int) want);
        }
        byte[] out = text;
        int pos = length;
        long raw = 0; // the UTF-8 bytes of the text
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x80) {
                if (c == '"' || c == '\\') {
                    out[pos++] = '\\';
                }
                out[pos++] = (byte) c;
                raw++;
            } else if (c < 0x20) {
                pos = control(c, out, pos);
                raw++;
            } else if (c < 0x800) {
                out[pos++] = (byte) (0xC0 | (c >> 6));
                out[pos++] = (byte) (0x80 | (c & 0x3F));
                raw += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                out[pos++] = (byte) (0xF0 | (cp >> 18));
                out[pos++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                out[pos++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                out[pos++] = (byte) (0x80 | (cp & 0x3F));
                raw += 4;
            } else if (Character.isSurrogate(c)) {
                return false; // a lone surrogate has no UTF-8 form
            } else {
                out[pos++] = (byte) (0xE0 | (c >> 12));
                out[pos++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                out[pos++] = (byte) (0x80 | (c & 0x3F));
                raw += 3;
            }
        }
        if (line.nextOffset() != line.offset() + raw + 1) {
            return false; // not a plain UTF-8 line ended by one newline: it goes on its own (nothing was committed)
        }
        out[pos++] = '\\';
        out[pos++] = 'n';
        length = pos;
        lastOffset = line.offset();
        next = line.nextOffset();
        lines++;
        return true;
    }

    /**
     * Starts an empty batch for lines read straight from a stream's bytes ({@link #appendAscii}).
     *
     * @param stdout whether the lines are stdout's
     * @param offset where the first line will start
     * @return the batch
     */
    public static LineBatch open(boolean stdout, long offset) {
        return open(stdout, offset, 4096);
    }

    /**
     * Starts an empty batch with room for about {@code capacity} bytes of text.
     *
     * @param stdout whether the lines are stdout's
     * @param offset where the first line will start
     * @param capacity the text expected (it grows past it when needed)
     * @return the batch
     */
    public static LineBatch open(boolean stdout, long offset, int capacity) {
        return new LineBatch(stdout, offset, Math.max(64, Math.min(capacity, MAX_TEXT_BYTES + 4096)));
    }

    /**
     * Adds a whole line whose bytes are their own JSON string form: printable ASCII without {@code "} or
     * {@code \\} (see {@link #appendAscii}).
     *
     * @param b the bytes
     * @param off where the line starts
     * @param len its length
     * @return whether it was added ({@code false} when the batch is full or sealed)
     */
    @Override
    public boolean appendPlain(byte[] b, int off, int len) {
        if (sealed || (lines > 0 && length + len > MAX_TEXT_BYTES)) {
            return false;
        }
        if (length + len + 2 > text.length) {
            text = Arrays.copyOf(text, Math.max(length + len + 2, Math.min(2 * text.length, 2 * MAX_TEXT_BYTES)));
        }
        System.arraycopy(b, off, text, length, len);
        text[length + len] = '\\';
        text[length + len + 1] = 'n';
        length += len + 2;
        lastOffset = next;
        next += len + 1;
        lines++;
        return true;
    }

    /**
     * Whether a whole plain line (see {@link #appendPlainLines}) starts at {@code pos}.
     *
     * @param b the bytes
     * @param pos where the line starts
     * @param maxLine lines this long or longer do not count
     * @return whether the line is plain, shorter than {@code maxLine} and ends in a newline within {@code b}
     */
    public static boolean plainLineAt(byte[] b, int pos, int maxLine) {
        int limit = Math.min(b.length, pos + maxLine);
        for (int i = pos; i < limit; i++) {
            byte c = b[i];
            if (c == '\n') {
                return true;
            }
            if (c < 0x20 || c == '"' || c == '\\') {
                return false;
            }
        }
        return false;
    }

    /**
     * Adds the run of whole plain lines (see {@link #appendPlain}) that starts at {@code pos}, copying byte by byte in
     * one pass. Stops before the first line that is not plain, that ends in {@code \r}, that is {@code maxLine} bytes
     * or longer, that has no newline before {@code end}, or that does not fit the batch; the caller takes that line
     * the slow way.
     *
     * @param b the bytes
     * @param pos where the first line starts
     * @param end where the bytes end
     * @param maxLine lines this long or longer are not added
     * @return where the first line not added starts ({@code pos} when none was added)
     */
    @Override
    public int appendPlainLines(byte[] b, int pos, int end, int maxLine) {
        if (sealed) {
            return pos;
        }
        byte[] out = text;
        int cap = out.length;
        int w = length;
        int lineText = w; // where the current line's text starts in the batch
        int lineFrom = pos;
        long at = next;
        long last = lastOffset;
        int n = lines;
        for (int i = pos; i < end; i++) {
            byte c = b[i];
            if (c == '\n') {
                int len = i - lineFrom;
                if (len >= maxLine || (n > 0 && lineText + len > MAX_TEXT_BYTES) || w + 2 > cap) {
                    break;
                }
                out[w++] = '\\';
                out[w++] = 'n';
                last = at;
                at += len + 1;
                n++;
                lineText = w;
                lineFrom = i + 1;
                continue;
            }
            // control bytes (\r among them), bytes of 0x80 and up (negative), quote and backslash need escaping
            if (c < 0x20 || c == '"' || c == '\\' || w == cap) {
                break;
            }
            out[w++] = c;
        }
        length = lineText;
        next = at;
        lastOffset = last;
        lines = n;
        return lineFrom;
    }

    /**
     * Adds a whole line from its raw bytes: ASCII only (no byte of {@code 0x80} or more), without its newline and
     * not ending in {@code \r}, so its text is its bytes and it takes them plus one newline.
     *
     * @param b the bytes
     * @param off where the line starts
     * @param len its length
     * @return whether it was added ({@code false} when the batch is full or sealed)
     */
    @Override
    public boolean appendAscii(byte[] b, int off, int len) {
        if (sealed || (lines > 0 && length + len > MAX_TEXT_BYTES)) {
            return false;
        }
        if (length + 6L * len + 2 > text.length) {
            long want = Math.max(length + 6L * len + 2, Math.min(2L * text.length, 2L * MAX_TEXT_BYTES));
            if (want > Integer.MAX_VALUE - 16) {
                return false;
            }
            text = Arrays.copyOf(text, (int) want);
        }
        byte[] out = text;
        int pos = length;
        int end = off + len;
        int run = off;
        for (int i = off; i < end; i++) {
            byte c = b[i];
            if (c < 0x20 || c == '"' || c == '\\') {
                System.arraycopy(b, run, out, pos, i - run);
                pos += i - run;
                if (c < 0x20) {
                    pos = control((char) c, out, pos);
                } else {
                    out[pos++] = '\\';
                    out[pos++] = c;
                }
                run = i + 1;
            }
        }
        System.arraycopy(b, run, out, pos, end - run);
        pos += end - run;
        out[pos++] = '\\';
        out[pos++] = 'n';
        length = pos;
        lastOffset = next;
        next += len + 1;
        lines++;
        return true;
    }

    private static int control(char c, byte[] out, int pos) {
        out[pos++] = '\\';
        switch (c) {
            case '\n' -> out[pos++] = 'n';
            case '\r' -> out[pos++] = 'r';
            case '\t' -> out[pos++] = 't';
            case '\b' -> out[pos++] = 'b';
            case '\f' -> out[pos++] = 'f';
            default -> {
                out[pos++] = 'u';
                out[pos++] = '0';
                out[pos++] = '0';
                out[pos++] = HEX[c >> 4];
                out[pos++] = HEX[c & 0xF];
            }
        }
        return pos;
    }

    /** Takes no more lines: it is being sent. */
    public void seal() {
        sealed = true;
    }

    /**
     * Whether the batch is stdout's.
     *
     * @return {@code true} for stdout, {@code false} for stderr
     */
    public boolean stdout() {
        return stdout;
    }

    /**
     * The offset of the first line.
     *
     * @return the offset
     */
    public long firstOffset() {
        return first;
    }

    /**
     * The offset of the last line.
     *
     * @return the offset
     */
    public long lastOffset() {
        return lastOffset;
    }

    /**
     * The offset just past the last line.
     *
     * @return the offset
     */
    public long nextOffset() {
        return next;
    }

    /**
     * The bytes the escaped text takes.
     *
     * @return the length
     */
    public int textBytes() {
        return length;
    }

    /**
     * The number of lines.
     *
     * @return the count
     */
    public int lines() {
        return lines;
    }

    /** Receives the lines of a batch one at a time. */
    @FunctionalInterface
    public interface LineVisitor {
        /**
         * One line.
         *
         * @param offset the line's offset
         * @param next the offset past it
         * @param text the batch's escaped text (the line's JSON string content without quotes)
         * @param from where the line's escaped text starts
         * @param to where it ends (before the escaped newline)
         */
        void line(long offset, long next, byte[] text, int from, int to);
    }

    /**
     * Visits the lines whose offset is greater than {@code after}, in order.
     *
     * @param after the offset of the last line the reader already has, or -1
     * @param visitor what receives each line
     */
    public void forEachLine(long after, LineVisitor visitor) {
        byte[] t = text;
        long offset = first;
        int from = 0;
        int i = 0;
        long raw = 0;
        while (i < length) {
            byte b = t[i];
            if (b == '\\') {
                byte e = t[i + 1];
                if (e == 'n') {
                    long lineNext = offset + raw + 1;
                    if (offset > after) {
                        visitor.line(offset, lineNext, t, from, i);
                    }
                    offset = lineNext;
                    raw = 0;
                    i += 2;
                    from = i;
                    continue;
                }
                if (e == 'u') {
                    raw += utf8Length(hex(t, i + 2));
                    i += 6;
                } else {
                    raw++;
                    i += 2;
                }
            } else {
                raw++;
                i++;
            }
        }
    }

    /**
     * The {@code lines} frame of the lines whose offset is greater than {@code after}.
     *
     * @param after the offset of the last line the reader already has, or -1
     * @return the frame's JSON, or {@code null} when the reader has every line
     */
    public byte[] frame(long after) {
        if (after >= lastOffset) {
            return null;
        }
        long[] start = {-1, 0};
        if (after < first) {
            start[0] = first;
        } else {
            forEachLine(after, (offset, lineNext, t, from, to) -> {
                if (start[0] < 0) {
                    start[0] = offset;
                    start[1] = from;
                }
            });
        }
        int from = (int) start[1];
        long offset = start[0];
        byte[] head = stdout ? STDOUT_HEAD : STDERR_HEAD;
        int size = head.length
                + StreamFrames.digits(offset)
                + StreamFrames.NEXT.length
                + StreamFrames.digits(next)
                + StreamFrames.TEXT.length
                + (length - from)
                + END.length;
        byte[] out = new byte[size];
        int pos = put(head, out, 0);
        StreamFrames.writeDigits(offset, out, pos, StreamFrames.digits(offset));
        pos += StreamFrames.digits(offset);
        pos = put(StreamFrames.NEXT, out, pos);
        StreamFrames.writeDigits(next, out, pos, StreamFrames.digits(next));
        pos += StreamFrames.digits(next);
        pos = put(StreamFrames.TEXT, out, pos);
        System.arraycopy(text, from, out, pos, length - from);
        pos += length - from;
        put(END, out, pos);
        return out;
    }

    private static int put(byte[] src, byte[] out, int pos) {
        System.arraycopy(src, 0, out, pos, src.length);
        return pos + src.length;
    }

    // ------------------------------------------------------------------ reading (client side)

    /**
     * Reads the head of a {@code lines} frame; its lines are decoded one at a time as they are iterated, so a large
     * frame never turns into all its line events at once. The buffer must not change while the lines are read.
     *
     * @param b the buffer
     * @param off where the frame starts
     * @param len its length without the newline
     * @return the lines, or {@code null} when the frame is not a {@code lines} frame in the compact form written here;
     *     iterating fails with {@link BackendException} where the text turns out malformed
     */
    static Iterable<ExecEvent.Line> read(byte[] b, int off, int len) {
        int end = off + len;
        StreamFrames.LineHead head = StreamFrames.lineHead(b, off, end, STDOUT_HEAD, STDERR_HEAD);
        int textEnd = end - END.length;
        if (head == null || textEnd < head.textStart() || !StreamFrames.startsWith(b, textEnd, end, END)) {
            return null;
        }
        return () -> new Reader(b, head.textStart(), textEnd, head.stdout(), head.offset(), head.next());
    }

    /** Decodes the text of a {@code lines} frame one line per {@link #next}. */
    private static final class Reader extends LazyIterator<ExecEvent.Line> {
        private final byte[] b;
        private final int textEnd;
        private final boolean out;
        private final long next;
        private int from;
        private long offset;

        Reader(byte[] b, int textStart, int textEnd, boolean out, long offset, long next) {
            this.b = b;
            this.from = textStart;
            this.textEnd = textEnd;
            this.out = out;
            this.offset = offset;
            this.next = next;
        }

        @Override
        protected ExecEvent.Line advance() {
            if (from < textEnd) {
                return decode();
            }
            if (offset != next) {
                throw malformed();
            }
            return null;
        }

        /** The line starting at {@code from}: its text runs to the next escaped newline. */
        private ExecEvent.Line decode() {
            boolean escaped = false;
            boolean ascii = true;
            int i = from;
            while (i < textEnd) {
                byte c = b[i];
                if (c == '"') {
                    throw malformed();
                }
                if (c != '\\') {
                    ascii &= c >= 0;
                    i++;
                    continue;
                }
                if (i + 1 >= textEnd) {
                    throw malformed();
                }
                byte e = b[i + 1];
                if (e != 'n') {
                    escaped = true;
                    i += e == 'u' ? 6 : 2;
                    continue;
                }
                String s;
                long raw;
                if (!escaped) {
                    // ASCII text is its own Latin-1 decoding, which is a plain copy
                    s = new String(b, from, i - from, ascii ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
                    raw = i - from;
                } else {
                    s = unescape(b, from, i);
                    raw = utf8Length(s);
                }
                long lineNext = offset + raw + 1;
                ExecEvent.Line line = out
                        ? new ExecEvent.Stdout(s, offset, false, lineNext)
                        : new ExecEvent.Stderr(s, offset, false, lineNext);
                offset = lineNext;
                from = i + 2;
                return line;
            }
            throw malformed(); // text after the last newline
        }
    }

    /**
     * Splits the decoded text of a {@code lines} frame into its line events (the frame read by a JSON parser).
     *
     * @param stdout whether the lines are stdout's
     * @param offset the first line's offset
     * @param next the offset past the last line
     * @param text the decoded text, every line followed by a newline
     * @return the lines
     */
    static List<ExecEvent.Line> split(boolean stdout, long offset, long next, String text) {
        if (text == null || (!text.isEmpty() && text.charAt(text.length() - 1) != '\n')) {
            throw malformed();
        }
        List<ExecEvent.Line> lines = new ArrayList<>();
        long at = offset;
        int from = 0;
        for (int nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
            String s = text.substring(from, nl);
            long lineNext = at + utf8Length(s) + 1;
            lines.add(
                    stdout
                            ? new ExecEvent.Stdout(s, at, false, lineNext)
                            : new ExecEvent.Stderr(s, at, false, lineNext));
            at = lineNext;
            from = nl + 1;
        }
        if (at != next) {
            throw malformed();
        }
        return lines;
    }

    private static BackendException malformed() {
        return new BackendException("the server sent a lines frame that cannot be read", null);
    }

    private static String unescape(byte[] b, int from, int to) {
        StringBuilder sb = new StringBuilder(to - from);
        int run = from;
        int i = from;
        while (i < to) {
            if (b[i] != '\\') {
                i++;
                continue;
            }
            if (i > run) {
                sb.append(new String(b, run, i - run, StandardCharsets.UTF_8));
            }
            if (i + 1 >= to) {
                throw malformed();
            }
            byte e = b[i + 1];
            switch (e) {
                case '"', '\\', '/' -> sb.append((char) e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (i + 6 > to) {
                        throw malformed();
                    }
                    sb.append((char) hex(b, i + 2));
                }
                default -> throw malformed();
            }
            i += e == 'u' ? 6 : 2;
            run = i;
        }
        if (to > run) {
            sb.append(new String(b, run, to - run, StandardCharsets.UTF_8));
        }
        return sb.toString();
    }

    private static int hex(byte[] b, int at) {
        int v = 0;
        for (int k = 0; k < 4; k++) {
            int c = b[at + k];
            int d = c >= '0' && c <= '9'
                    ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (d < 0) {
                throw malformed();
            }
            v = v * 16 + d;
        }
        return v;
    }

    private static int utf8Length(int c) {
        return c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    }

    private static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }
}
