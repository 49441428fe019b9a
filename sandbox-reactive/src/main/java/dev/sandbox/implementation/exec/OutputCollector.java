package dev.sandbox.implementation.exec;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecResult;
import dev.sandbox.implementation.process.RawEvent;
import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/** Collects raw output for {@code run}: the head of each stream up to a cap, and the count of every byte. */
final class OutputCollector {
    private final long cap;
    private final ByteArrayOutputStream[] kept = {new ByteArrayOutputStream(), new ByteArrayOutputStream()};
    private final long[] seen = new long[2];
    private final Function<RawEvent.Exited, ExecEvent.Exit> exitMapper;
    private ExecEvent.Exit exit;

    OutputCollector(long cap, Function<RawEvent.Exited, ExecEvent.Exit> exitMapper) {
        this.cap = cap;
        this.exitMapper = exitMapper;
    }

    void accept(RawEvent event) {
        switch (event) {
            case RawEvent.Chunk chunk -> {
                int s = chunk.stream();
                byte[] bytes = chunk.bytes();
                long room = cap - kept[s].size();
                if (room > 0) {
                    kept[s].write(bytes, 0, (int) Math.min(room, bytes.length));
                }
                seen[s] += bytes.length;
            }
            case RawEvent.Flush flush -> {} // run() collects whole streams
            case RawEvent.Exited exited -> exit = exitMapper.apply(exited);
        }
    }

    ExecResult result(Charset charset) {
        return new ExecResult(
                exit.code(),
                decode(RawEvent.STDOUT, charset),
                decode(RawEvent.STDERR, charset),
                seen[RawEvent.STDOUT] > kept[RawEvent.STDOUT].size(),
                seen[RawEvent.STDERR] > kept[RawEvent.STDERR].size(),
                seen[RawEvent.STDOUT],
                seen[RawEvent.STDERR],
                exit.termination(),
                exit.duration());
    }

    private String decode(int stream, Charset charset) {
        byte[] bytes = kept[stream].toByteArray();
        int len = bytes.length;
        if (seen[stream] > len && charset.equals(StandardCharsets.UTF_8)) {
            len = utf8Boundary(bytes, len);
        }
        return new String(bytes, 0, len, charset);
    }

    /** The longest prefix of {@code bytes[0..len)} that does not end inside a UTF-8 character. */
    static int utf8Boundary(byte[] bytes, int len) {
        int start = len - 1;
        for (int steps = 0; steps < 3 && start > 0 && (bytes[start] & 0xC0) == 0x80; steps++) {
            start--;
        }
        if (start < 0) {
            return len;
        }
        int lead = bytes[start] & 0xFF;
        int need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
        return start + need > len ? start : len;
    }
}
