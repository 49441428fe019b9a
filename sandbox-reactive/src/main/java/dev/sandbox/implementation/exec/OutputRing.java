package dev.sandbox.implementation.exec;

/**
 * The newest bytes of one output stream, addressed by stream offset. Offsets {@code [start, end)} are held. Methods
 * are synchronized: the I/O thread appends while readers copy, each for a few microseconds.
 */
final class OutputRing {
    private final byte[] buffer;
    private long start;
    private long end;

    OutputRing(int capacity) {
        this.buffer = new byte[capacity];
    }

    synchronized long start() {
        return start;
    }

    synchronized long end() {
        return end;
    }

    synchronized int free() {
        return buffer.length - (int) (end - start);
    }

    /** Appends bytes, dropping the oldest ones when full. */
    synchronized void append(byte[] bytes) {
        int len = bytes.length;
        int from = 0;
        if (len > buffer.length) {
            from = len - buffer.length; // only the tail fits
            end += from;
            start = end;
            len = buffer.length;
        }
        long newEnd = end + len;
        if (newEnd - start > buffer.length) {
            start = newEnd - buffer.length;
        }
        int pos = (int) (end % buffer.length);
        int first = Math.min(len, buffer.length - pos);
        System.arraycopy(bytes, from, buffer, pos, first);
        System.arraycopy(bytes, from + first, buffer, 0, len - first);
        end = newEnd;
    }

    /**
     * Copies up to {@code max} bytes from {@code offset}.
     *
     * @return the bytes, empty when {@code offset == end}, or {@code null} when {@code offset} was dropped
     */
    synchronized byte[] read(long offset, int max) {
        if (offset < start) {
            return null;
        }
        int len = (int) Math.min(max, end - offset);
        if (len <= 0) {
            return EMPTY;
        }
        byte[] out = new byte[len];
        int pos = (int) (offset % buffer.length);
        int first = Math.min(len, buffer.length - pos);
        System.arraycopy(buffer, pos, out, 0, first);
        System.arraycopy(buffer, 0, out, first, len - first);
        return out;
    }

    /** Forgets bytes before {@code offset} (never past the end). */
    synchronized void release(long offset) {
        start = Math.max(start, Math.min(offset, end));
    }

    static final byte[] EMPTY = new byte[0];
}
