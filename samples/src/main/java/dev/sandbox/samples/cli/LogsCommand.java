package dev.sandbox.samples.cli;

import dev.sandbox.ExecEvent;
import dev.sandbox.blocking.BackgroundProcessHandle;
import dev.sandbox.blocking.ProcessOutput;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.util.Iterator;

/**
 * {@code sandbox logs}: copies a background process's lines from the given offsets to stdout and stderr, as {@code
 * exec} does. Without {@code --follow} it prints what the process's ring buffers hold now and exits 0; with it, it
 * waits for more until the process ends and exits with its exit code.
 */
final class LogsCommand {
    private LogsCommand() {}

    static int run(SandboxClient client, CommandLine.Logs logs, PrintStream out, PrintStream err) {
        BackgroundProcessHandle process = client.process().process(logs.process());
        LineSink stdout = new LineSink(out);
        LineSink stderr = new LineSink(err);
        int code = 0;
        try (ProcessOutput events = logs.follow()
                ? process.output(logs.stdoutFrom(), logs.stderrFrom())
                : process.snapshot(logs.stdoutFrom(), logs.stderrFrom())) {
            Iterator<ExecEvent> it = events.iterator();
            while (it.hasNext()) {
                switch (it.next()) {
                    case ExecEvent.Stdout line -> stdout.write(line);
                    case ExecEvent.Stderr line -> stderr.write(line);
                    case ExecEvent.Exit exit -> code = logs.follow() ? exit.code() : 0;
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
