package dev.sandbox.samples.cli;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.blocking.ExecStream;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.util.Iterator;

/**
 * {@code sandbox exec}: copies the command's lines to stdout and stderr as they arrive. Output is buffered and
 * flushed only when no further event is waiting, so a lone line shows at once and bulk output is written in large
 * blocks.
 */
final class ExecCommand {
    private ExecCommand() {}

    static int run(SandboxClient client, ExecOptions options, PrintStream out, PrintStream err) {
        LineSink stdout = new LineSink(out);
        LineSink stderr = new LineSink(err);
        int code = SandboxCli.EXIT_ERROR;
        try (ExecStream events = client.process().exec(options)) {
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
}
