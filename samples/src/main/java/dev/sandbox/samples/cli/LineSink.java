package dev.sandbox.samples.cli;

import dev.sandbox.ExecEvent;
import java.io.BufferedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * A buffered, non-autoflushing writer of output lines over one of the CLI's streams that remembers whether it holds
 * output. A line gets its newline back unless it is partial (cut at the maximum line length, or a prompt delivered
 * after a quiet interval) and continues in the next. A chunk of byte output is written as it is.
 */
final class LineSink {
    private static final int BUFFER = 64 * 1024;

    private final PrintStream stream;
    private boolean dirty;

    LineSink(PrintStream target) {
        this.stream = new PrintStream(new BufferedOutputStream(target, BUFFER), false, StandardCharsets.UTF_8);
    }

    void write(ExecEvent.Line line) {
        stream.print(line.text());
        if (!line.partial()) {
            stream.print('\n');
        }
        dirty = true;
    }

    void write(ExecEvent.Chunk chunk) {
        stream.write(chunk.bytes(), 0, chunk.size());
        dirty = true;
    }

    void flush() {
        if (dirty) {
            stream.flush();
            dirty = false;
        }
    }
}
