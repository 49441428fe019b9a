package dev.sandbox.implementation.wire;

import dev.sandbox.BackendException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Cuts a byte stream into newline-terminated lines and decodes each with {@link StreamFrames#streamItem}. Lines
 * whole in a chunk are decoded in place (an item may keep reading the chunk, which must not change afterwards); a line
 * split across chunks is carried, up to a bound. One instance per stream, used by one thread at a time.
 */
public final class LineSplitter {
    /** The longest line accepted: a 64 KiB output line is at most six times that once JSON-escaped, plus framing. */
    public static final int MAX_LINE = 8 * 1024 * 1024;

    private byte[] carry = new byte[0];
    private int carryLen;

    /** A splitter for one stream, carrying nothing yet. */
    public LineSplitter() {}

    /**
     * Decodes the complete lines of a chunk, keeping a trailing partial line for the next.
     *
     * @param chunk the bytes
     * @return the decoded items, each with its wire size
     */
    public List<Sized> split(byte[] chunk) {
        List<Sized> out = new ArrayList<>();
        int pos = 0;
        while (pos < chunk.length) {
            int nl = indexOf(chunk, pos);
            if (nl < 0) {
                append(chunk, pos, chunk.length - pos);
                break;
            }
            if (carryLen == 0) {
                decode(chunk, pos, nl - pos, out);
            } else {
                append(chunk, pos, nl - pos);
                // a decoded item may read its bytes later (a lines frame): give it its own copy of the carry
                decode(Arrays.copyOf(carry, carryLen), 0, carryLen, out);
                carryLen = 0;
            }
            pos = nl + 1;
        }
        return out;
    }

    /**
     * Whether a partial line is pending (the stream ended mid-line).
     *
     * @return {@code true} when bytes are carried
     */
    public boolean pending() {
        return carryLen > 0;
    }

    private static void decode(byte[] bytes, int off, int len, List<Sized> out) {
        if (len == 0 || (len == 1 && bytes[off] == '\r')) {
            return;
        }
        out.add(new Sized(StreamFrames.streamItem(bytes, off, len), len + 1));
    }

    private void append(byte[] bytes, int off, int len) {
        if (carryLen + len > MAX_LINE) {
            throw new BackendException("the server sent a stream line longer than " + MAX_LINE + " bytes", null);
        }
        if (carryLen + len > carry.length) {
            carry = Arrays.copyOf(carry, Math.max(carryLen + len, Math.min(MAX_LINE, carry.length * 2 + 1024)));
        }
        System.arraycopy(bytes, off, carry, carryLen, len);
        carryLen += len;
    }

    private static int indexOf(byte[] bytes, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    /**
     * A decoded item and the bytes it took on the wire.
     *
     * @param item the item
     * @param wireBytes its line's length including the newline
     */
    public record Sized(StreamFrames.StreamItem item, int wireBytes) {}
}
