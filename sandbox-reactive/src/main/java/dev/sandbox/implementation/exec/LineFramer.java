package dev.sandbox.implementation.exec;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.implementation.process.RawEvent;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.function.Function;

/**
 * Turns raw chunks into line events at the byte level: a line is cut at {@code \n} (a {@code \r} before it is
 * dropped) and decoded once, whole, so a multi-byte character split across reads decodes right. Lines longer than
 * the maximum are emitted in pieces flagged partial, cut on a UTF-8 character boundary. A {@link RawEvent.Flush}
 * (see {@link QuietFlush}) delivers the bytes held of a stream as a partial line, up to the last whole character.
 * Lines are produced lazily, one per {@code next()}, so a chunk is framed only as fast as the subscriber asks.
 *
 * <p>With byte output ({@link ExecOptions#byteOutput()}) a chunk becomes {@link ExecEvent.Chunk} events as it is,
 * cut only at {@link ExecEvent.Chunk#MAX_BYTES}.
 *
 * <p>Not thread-safe: one instance per execution, used by one thread at a time.
 */
final class LineFramer {
    private final int maxLine;
    private final Charset charset;
    private final boolean utf8;
    private final StreamState[] streams;
    private final Function<RawEvent.Exited, ExecEvent.Exit> exitMapper;
    /** Deliver what a chunk leaves pending at once (a partial-line delay of zero). */
    private final boolean flushEachChunk;
    /** Byte output: chunks, not lines. */
    private final boolean bytes;

    LineFramer(int maxLine, Charset charset, Function<RawEvent.Exited, ExecEvent.Exit> exitMapper) {
        this(maxLine, charset, exitMapper, 0, 0);
    }

    /** A framer for a command's options (line length, charset, partial-line delay, byte output). */
    LineFramer(
            ExecOptions options,
            Function<RawEvent.Exited, ExecEvent.Exit> exitMapper,
            long stdoutStart,
            long stderrStart) {
        this(
                options.maxLineLength(),
                options.charset(),
                exitMapper,
                stdoutStart,
                stderrStart,
                options.partialLineDelay().isZero(),
                options.byteOutput());
    }

    /** A framer whose streams start at the given byte offsets (a reader resuming mid-stream). */
    LineFramer(
            int maxLine,
            Charset charset,
            Function<RawEvent.Exited, ExecEvent.Exit> exitMapper,
            long stdoutStart,
            long stderrStart) {
        this(maxLine, charset, exitMapper, stdoutStart, stderrStart, false, false);
    }

    private LineFramer(
            int maxLine,
            Charset charset,
            Function<RawEvent.Exited, ExecEvent.Exit> exitMapper,
            long stdoutStart,
            long stderrStart,
            boolean flushEachChunk,
            boolean bytes) {
        this.flushEachChunk = flushEachChunk;
        this.bytes = bytes;
        this.maxLine = bytes ? 0 : maxLine;
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
            case RawEvent.Chunk chunk when bytes -> () -> streams[chunk.stream()].chunks(chunk.bytes());
            case RawEvent.Chunk chunk -> () -> streams[chunk.stream()].lines(chunk.bytes());
            case RawEvent.Flush flush -> () -> streams[flush.stream()].flushPartial();
            case RawEvent.Exited exited -> () -> new ExitIterator(exited);
        };
    }

    /**
     * At the end of a stream that ended without an exit (a snapshot of a running process): what is held of each
     * stream, as partial lines (an incomplete trailing UTF-8 sequence excepted).
     */
    Iterator<ExecEvent> pending() {
        return new LazyIterator<ExecEvent>() {
            int s;

            @Override
            protected ExecEvent advance() {
                while (s < 2) {
                    ExecEvent e = streams[s++].partialNow();
                    if (e != null) {
                        return e;
                    }
                }
                return null;
            }
        };
    }

    /** Whether this framer makes chunks (byte output), which never wait for a line's end. */
    boolean bytes() {
        return bytes;
    }

    /**
     * The items a raw event yields for a reader that takes runs of lines (see {@link StreamState#batches}): runs made
     * by {@code runs} and the events that cannot go into one, produced lazily.
     */
    <R extends LineRun> Iterable<Framed<R>> frameBatches(RawEvent event, LineRun.Factory<R> runs) {
        return switch (event) {
            case RawEvent.Chunk chunk when bytes -> events(streams[chunk.stream()].chunks(chunk.bytes()));
            case RawEvent.Chunk chunk -> () -> streams[chunk.stream()].batches(chunk.bytes(), runs);
            case RawEvent.Flush flush -> events(streams[flush.stream()].flushPartial());
            case RawEvent.Exited exited -> {
                ExitIterator exit = new ExitIterator(exited);
                yield () -> new Iterator<Framed<R>>() {
                    @Override
                    public boolean hasNext() {
                        return exit.hasNext();
                    }

                    @Override
                    public Framed<R> next() {
                        return new Framed.Event<>(exit.next());
                    }
                };
            }
        };
    }

    /** Events as items of a batched stream, each on its own. */
    private static <R extends LineRun> Iterable<Framed<R>> events(Iterator<ExecEvent> events) {
        return () -> new Iterator<Framed<R>>() {
            @Override
            public boolean hasNext() {
                return events.hasNext();
            }

            @Override
            public Framed<R> next() {
                return new Framed.Event<>(events.next());
            }
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
        final byte[] carry = new byte[maxLine]; // empty with byte output
        int carryLen;
        /** Stream offset of the first byte of the line being assembled. */
        long lineStart;

        StreamState(int stream) {
            this.stream = stream;
        }

        Iterator<ExecEvent> lines(byte[] bytes) {
            return new LazyIterator<ExecEvent>() {
                int pos;

                @Override
                protected ExecEvent advance() {
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
                    if (flushEachChunk && !flushed) {
                        flushed = true;
                        return partialNow();
                    }
                    return null;
                }

                private boolean flushed;
            };
        }

        /** The bytes of a chunk as chunk events of at most {@link ExecEvent.Chunk#MAX_BYTES}, offsets counted. */
        Iterator<ExecEvent> chunks(byte[] bytes) {
            return new LazyIterator<ExecEvent>() {
                int pos;

                @Override
                protected ExecEvent advance() {
                    if (pos >= bytes.length) {
                        return null;
                    }
                    int len = Math.min(ExecEvent.Chunk.MAX_BYTES, bytes.length - pos);
                    ExecEvent.Chunk chunk = new ExecEvent.Chunk(
                            stream == RawEvent.STDOUT ? ExecEvent.StreamKind.STDOUT : ExecEvent.StreamKind.STDERR,
                            ByteBuffer.wrap(bytes, pos, len).slice(),
                            lineStart);
                    lineStart += len;
                    pos += len;
                    return chunk;
                }
            };
        }

        /** The quiet interval passed: what is held, up to the last whole character, as one partial line. */
        Iterator<ExecEvent> flushPartial() {
            return new LazyIterator<ExecEvent>() {
                boolean done;

                @Override
                protected ExecEvent advance() {
                    if (done) {
                        return null;
                    }
                    done = true;
                    return partialNow();
                }
            };
        }

        /**
         * The held bytes as a partial line, or {@code null} when none is held. An incomplete UTF-8 sequence at the
         * end stays held for the bytes that complete it (invalid bytes go out as they are).
         */
        ExecEvent partialNow() {
            if (carryLen == 0) {
                return null;
            }
            int cut = utf8 ? OutputCollector.utf8Boundary(carry, carryLen) : carryLen;
            if (cut < carryLen) {
                int lead = carry[cut] & 0xFF;
                if (lead < 0xC2 || lead > 0xF4) {
                    cut = carryLen; // not the start of any valid character: nothing can complete it
                }
            }
            if (cut == 0) {
                return null;
            }
            ExecEvent.Line line = line(stream, carry, 0, cut, lineStart, true, lineStart + cut);
            lineStart += cut;
            System.arraycopy(carry, cut, carry, 0, carryLen - cut);
            carryLen -= cut;
            return line;
        }

        /**
         * The lines of a chunk as batches: exactly the events {@link #lines} yields, except that runs of whole lines
         * that {@code runs} accepts come as one run each. A line within the chunk that is plain ASCII is copied
         * into the batch from its bytes, without becoming a string; any other line is framed as in {@link #lines}
         * and goes into the batch when it fits its shape, or comes on its own.
         */
        <R extends LineRun> Iterator<Framed<R>> batches(byte[] bytes, LineRun.Factory<R> runs) {
            boolean out = stream == RawEvent.STDOUT;
            return new LazyIterator<Framed<R>>() {
                int pos;
                R open;
                Framed<R> after; // an item that follows the batch being returned

                /** Closes the open batch (if any) before an item; returns what comes first. */
                private Framed<R> emit(ExecEvent event) {
                    Framed<R> item = new Framed.Event<>(event);
                    if (open == null) {
                        return item;
                    }
                    Framed<R> batch = new Framed.Run<>(open);
                    open = null;
                    after = item;
                    return batch;
                }

                @Override
                protected Framed<R> advance() {
                    if (after != null) {
                        Framed<R> o = after;
                        after = null;
                        return o;
                    }
                    while (pos < bytes.length) {
                        if (carryLen == 0 && utf8 && (open != null || runs.plainLineAt(bytes, pos, maxLine))) {
                            // the common case first: a run of plain ASCII lines, copied into the batch in one pass
                            if (open == null) {
                                open = runs.open(out, lineStart, bytes.length - pos + 64);
                            }
                            int after = open.appendPlainLines(bytes, pos, bytes.length, maxLine);
                            lineStart += after - pos;
                            pos = after;
                            if (pos == bytes.length) {
                                break;
                            }
                        }
                        int room = maxLine - carryLen;
                        int limit = Math.min(bytes.length, pos + room);
                        // one pass: find the newline and see whether the line is ASCII (so its bytes are its
                        // text), and whether it is plain (so its bytes are also their JSON form)
                        int nl = -1;
                        boolean ascii = true;
                        boolean plain = true;
                        for (int i = pos; i < limit; i++) {
                            byte b = bytes[i];
                            if (b >= 0x20 && b != '"' && b != '\\') {
                                continue;
                            }
                            if (b == '\n') {
                                nl = i;
                                break;
                            }
                            plain = false;
                            if (b < 0) {
                                ascii = false;
                            }
                        }
                        if (nl >= 0) {
                            int len = nl - pos;
                            if (carryLen == 0 && utf8 && ascii && (len == 0 || bytes[nl - 1] != '\r')) {
                                if (open == null) {
                                    open = runs.open(out, lineStart, bytes.length - pos + 64);
                                }
                                if (!(plain ? open.appendPlain(bytes, pos, len) : open.appendAscii(bytes, pos, len))) {
                                    Framed<R> full = new Framed.Run<>(open);
                                    open = runs.open(out, lineStart, bytes.length - pos + 64);
                                    open.appendAscii(bytes, pos, len);
                                    lineStart += len + 1;
                                    pos = nl + 1;
                                    return full;
                                }
                                lineStart += len + 1;
                                pos = nl + 1;
                                continue;
                            }
                            ExecEvent.Line line;
                            if (carryLen == 0) {
                                line = line(stream, bytes, pos, len, lineStart, false, lineStart + len + 1);
                            } else {
                                int joinedLen = carryLen + len;
                                byte[] joined = new byte[joinedLen];
                                System.arraycopy(carry, 0, joined, 0, carryLen);
                                System.arraycopy(bytes, pos, joined, carryLen, len);
                                line = line(stream, joined, 0, joinedLen, lineStart, false, lineStart + joinedLen + 1);
                            }
                            lineStart += carryLen + len + 1;
                            carryLen = 0;
                            pos = nl + 1;
                            if (open != null && open.append(line)) {
                                continue;
                            }
                            R fresh = runs.of(line);
                            if (fresh == null) {
                                return emit(line);
                            }
                            if (open == null) {
                                open = fresh;
                                continue;
                            }
                            Framed<R> full = new Framed.Run<>(open);
                            open = fresh;
                            return full;
                        }
                        System.arraycopy(bytes, pos, carry, carryLen, limit - pos);
                        carryLen += limit - pos;
                        pos = limit;
                        if (carryLen == maxLine) {
                            return emit(splitFull());
                        }
                    }
                    if (flushEachChunk && !flushed) {
                        flushed = true;
                        ExecEvent partial = partialNow();
                        if (partial != null) {
                            return emit(partial);
                        }
                    }
                    if (open != null) {
                        Framed<R> batch = new Framed.Run<>(open);
                        open = null;
                        return batch;
                    }
                    return null;
                }

                private boolean flushed;
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

    private final class ExitIterator extends LazyIterator<ExecEvent> {
        private final RawEvent.Exited exited;
        private int step;

        ExitIterator(RawEvent.Exited exited) {
            this.exited = exited;
        }

        @Override
        protected ExecEvent advance() {
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

    static int indexOf(byte[] bytes, byte b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
