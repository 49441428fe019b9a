package dev.sandbox.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The baselines' way of reading a process's output without the SDK: a plain loop over an {@link InputStream} that
 * reads 64 KiB at a time, cuts lines at {@code \n} and decodes each line to a {@link String}, as the SDK does for
 * every line it emits. No threads, no queues, no per-line objects other than the string.
 *
 * <pre>{@code
 * RawLines.Count c = RawLines.count(process.getInputStream());
 * }</pre>
 */
public final class RawLines {
    private static final int BUFFER = 64 * 1024;

    /**
     * What a read produced.
     *
     * @param lines lines read (a last line without a newline counts)
     * @param chars characters in all lines, so the decoded strings are used
     */
    public record Count(long lines, long chars) {}

    private RawLines() {}

    /**
     * Reads a stream to its end, splitting and decoding lines.
     *
     * @param in the stream; not closed here
     * @return lines and characters read
     * @throws IOException when reading fails
     */
    public static Count count(InputStream in) throws IOException {
        byte[] buf = new byte[BUFFER];
        int start = 0; // first byte of the line being assembled
        int end = 0; // bytes in buf
        long lines = 0;
        long chars = 0;
        while (true) {
            if (end == buf.length) {
                if (start == 0) {
                    buf = java.util.Arrays.copyOf(buf, buf.length * 2); // a line longer than the buffer
                } else {
                    System.arraycopy(buf, start, buf, 0, end - start);
                    end -= start;
                    start = 0;
                }
            }
            int n = in.read(buf, end, buf.length - end);
            if (n < 0) {
                break;
            }
            int scan = end;
            end += n;
            for (int i = scan; i < end; i++) {
                if (buf[i] == '\n') {
                    String line = new String(buf, start, i - start, StandardCharsets.UTF_8);
                    chars += line.length();
                    lines++;
                    start = i + 1;
                }
            }
        }
        if (end > start) {
            chars += new String(buf, start, end - start, StandardCharsets.UTF_8).length();
            lines++;
        }
        return new Count(lines, chars);
    }
}
