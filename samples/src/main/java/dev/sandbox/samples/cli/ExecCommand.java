package dev.sandbox.samples.cli;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.blocking.ExecStream;
import dev.sandbox.blocking.SandboxClient;
import java.io.BufferedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;

/**
 * {@code sandbox exec}: copies the command's lines to stdout and stderr as they arrive. Output is buffered and
 * flushed only when no further event is waiting, so a lone line shows at once and bulk output is written in large
 * blocks.
 */
final class ExecCommand {
    private static final int BUFFER = 64 * 1024;

    private ExecCommand() {}

    static int run(SandboxClient client, ExecOptions options, PrintStream out, PrintStream err) {
        Sink stdout = new Sink(out);
        Sink stderr = new Sink(err);
        int code = SandboxCli.EXIT_ERROR;
        try (ExecStream events = client.process().stream(options)) {
            Iterator<ExecEvent> it = events.iterator();
            while (it.hasNext()) {
                switch (it.next()) {
                    case ExecEvent.Stdout line -> stdout.write(line);
                    case ExecEvent.Stderr line -> stderr.write(line);
                    case ExecEvent.Exit exit -> code = exit.code();
                }
                if (!events.ready()) {
                    stdout.flush();
                    stderr.flush();
                }
            }
        } finally {
            stdout.flush();
            stderr.flush();
        }
        return code;
    }

    /** A buffered, non-autoflushing writer over one of the CLI's streams that remembers whether it holds output. */
    private static final class Sink {
        private final PrintStream stream;
        private boolean dirty;

        Sink(PrintStream target) {
            this.stream = new PrintStream(new BufferedOutputStream(target, BUFFER), false, StandardCharsets.UTF_8);
        }

        void write(ExecEvent.Line line) {
            stream.print(line.text());
            if (!line.partial()) {
                stream.print('\n');
            }
            dirty = true;
        }

        void flush() {
            if (dirty) {
                stream.flush();
                dirty = false;
            }
        }
    }
}
