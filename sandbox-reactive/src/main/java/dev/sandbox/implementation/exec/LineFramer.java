package dev.sandbox.implementation.exec;

import dev.sandbox.ExecEvent;
import dev.sandbox.implementation.process.RawEvent;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * Turns raw chunks into line events at the byte level: a line is cut at {@code \n} (a {@code \r} before it is
 * dropped) and decoded once, whole, so a multi-byte character split across reads decodes right. Lines longer than
 * the maximum are emitted in pieces flagged partial, cut on a UTF-8 character boundary. Lines are produced lazily,
 * one per {@code next()}, so a chunk is framed only as fast as the subscriber asks.
 *
 * <p>Not thread-safe: one instance per execution, used by one thread at a time.
 */
final class LineFramer {
    private final int maxLine;
    private final Charset charset;
    private final boolean utf8;
    private final StreamState[] streams;
    private final Function<RawEvent.Exited, ExecEvent.Exit> exitMapper;

    LineFramer(int maxLine, Charset charset, Function<RawEvent.Exited, ExecEvent.Exit> exitMapper) {
        this(maxLine, charset, exitMapper, 0, 0);
    }

    /** A framer whose streams start at the given byte offsets (a reader resuming mid-stream). */
    LineFramer(
            int maxLine,
            Charset charset,
            Function<RawEvent.Exited, ExecEvent.Exit> exitMapper,
            long stdoutStart,
            long stderrStart) {
        this.maxLine = maxLine;
        this.charset = charset;
        this.utf8 = charset.equals(StandardCharsets.UTF_8);
        this.exitMapper = exitMapper;
        this.streams = new StreamState[] {new StreamState(RawEvent.STDOUT), new StreamState(RawEvent.STDERR)};
        streams[RawEvent.STDOUT].lineStart = stdoutStart;
        streams[RawEvent.STDERR].lineStart = stderrStart;
    }

    /** The events a raw event yields, produced lazily. */
    Iterable<ExecEvent> frame(RawEvent event) {
        return switch (event) {
            case RawEvent.Chunk chunk -> () -> streams[chunk.stream()].lines(chunk.bytes());
            case RawEvent.Exited exited -> () -> new ExitIterator(exited);
        };
    }

    private ExecEvent.Line line(
            int stream, byte[] bytes, int off, int len, long offset, boolean partial, long nextOffset) {
        int end = off + len;
        if (!partial && len > 0 && bytes[end - 1] == '\r') {
            end--;
        }
        String text = new String(bytes, off, end - off, charset);
        return stream == RawEvent.STDOUT
                ? new ExecEvent.Stdout(text, offset, partial, nextOffset)
                : new ExecEvent.Stderr(text, offset, partial, nextOffset);
    }

    private final class StreamState {
        final int stream;
        final byte[] carry = new byte[maxLine];
        int carryLen;
        /** Stream offset of the first byte of the line being assembled. */
        long lineStart;

        StreamState(int stream) {
            this.stream = stream;
        }

        Iterator<ExecEvent> lines(byte[] bytes) {
            return new LazyIterator() {
                int pos;

                @Override
                ExecEvent advance() {
                    while (pos < bytes.length) {
                        int room = maxLine - carryLen;
                        int limit = Math.min(bytes.length, pos + room);
                        int nl = indexOf(bytes, (byte) '\n', pos, limit);
                        if (nl >= 0) {
                            ExecEvent.Line line;
                            if (carryLen == 0) {
                                line = line(stream, bytes, pos, nl - pos, lineStart, false, lineStart + (nl - pos) + 1);
                            } else {
                                int len = carryLen + nl - pos;
                                byte[] joined = new byte[len];
                                System.arraycopy(carry, 0, joined, 0, carryLen);
                                System.arraycopy(bytes, pos, joined, carryLen, nl - pos);
                                line = line(stream, joined, 0, len, lineStart, false, lineStart + len + 1);
                            }
                            lineStart += carryLen + (nl - pos) + 1;
                            carryLen = 0;
                            pos = nl + 1;
                            return line;
                        }
                        System.arraycopy(bytes, pos, carry, carryLen, limit - pos);
                        carryLen += limit - pos;
                        pos = limit;
                        if (carryLen == maxLine) {
                            return splitFull();
                        }
                    }
                    return null;
                }
            };
        }

        /** The carry buffer is full without a newline: emit its head as a partial line. */
        ExecEvent splitFull() {
            int cut = maxLine;
            if (utf8) {
                // find where the last character starts; if it does not fit, cut before it
                int start = maxLine - 1;
                for (int steps = 0; steps < 3 && start > 0 && (carry[start] & 0xC0) == 0x80; steps++) {
                    start--;
                }
                int lead = carry[start] & 0xFF;
                int need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
                if (start > 0 && start + need > maxLine) {
                    cut = start;
                }
            }
            ExecEvent.Line line = line(stream, carry, 0, cut, lineStart, true, lineStart + cut);
            lineStart += cut;
            System.arraycopy(carry, cut, carry, 0, carryLen - cut);
            carryLen -= cut;
            return line;
        }

        /** The stream ended: whatever is left is a last line without a newline. */
        ExecEvent flush() {
            if (carryLen == 0) {
                return null;
            }
            ExecEvent.Line line = line(stream, carry, 0, carryLen, lineStart, false, lineStart + carryLen);
            lineStart += carryLen;
            carryLen = 0;
            return line;
        }
    }

    private final class ExitIterator extends LazyIterator {
        private final RawEvent.Exited exited;
        private int step;

        ExitIterator(RawEvent.Exited exited) {
            this.exited = exited;
        }

        @Override
        ExecEvent advance() {
            while (step < 3) {
                ExecEvent e = step < 2 ? streams[step].flush() : exitMapper.apply(exited);
                step++;
                if (e != null) {
                    return e;
                }
            }
            return null;
        }
    }

    /** An iterator that computes each element on demand; {@link #advance()} returns null at the end. */
    private abstract static class LazyIterator implements Iterator<ExecEvent> {
        private ExecEvent next;

        abstract ExecEvent advance();

        @Override
        public boolean hasNext() {
            if (next == null) {
                next = advance();
            }
            return next != null;
        }

        @Override
        public ExecEvent next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            ExecEvent e = next;
            next = null;
            return e;
        }
    }

    static int indexOf(byte[] bytes, byte b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
