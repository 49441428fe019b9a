package dev.sandbox.samples.cli;

import dev.sandbox.ExecEvent;
import dev.sandbox.blocking.BackgroundProcessHandle;
import dev.sandbox.blocking.ProcessOutput;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.util.Iterator;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code sandbox logs}: copies a background process's lines from the given offsets to stdout and stderr, as {@code
 * exec} does. Without {@code --follow} it prints what the process's ring buffers hold now and exits 0; with it, it
 * waits for more until the process ends and exits with its exit code.
 */
@Command(
        name = "logs",
        customSynopsis =
                "sandbox logs [PROVIDER] [--from OFFSET | --from-stdout OUT --from-stderr ERR] [--follow] SESSION PROCESS",
        description = {
            "Prints what background process PROCESS of session SESSION wrote (see exec --background), from byte"
                    + " offset OFFSET, and exits 0; with --follow, waits for more until the process ends and exits"
                    + " with its exit code."
        })
final class LogsCommand extends SessionSubcommand {
    @Option(
            names = "--from",
            paramLabel = "OFFSET",
            converter = Offsets.Converter.class,
            description = "where to start: OFFSET (both streams), OUT,ERR, or stdout=OUT,stderr=ERR (either may be"
                    + " left out: 0) [0]")
    Offsets from;

    @Option(
            names = "--from-stdout",
            paramLabel = "OUT",
            converter = Values.WholeNumber.class,
            description = "where stdout starts, in bytes [0]")
    Long fromStdout;

    @Option(
            names = "--from-stderr",
            paramLabel = "ERR",
            converter = Values.WholeNumber.class,
            description = "where stderr starts, in bytes [0]")
    Long fromStderr;

    @Option(names = "--follow", arity = "0", description = "wait for more output until the process ends")
    boolean follow;

    @Parameters(index = "0", paramLabel = "SESSION", converter = Values.NonBlank.class, description = "the session")
    String session;

    @Parameters(index = "1", paramLabel = "PROCESS", converter = Values.NonBlank.class, description = "the process")
    String process;

    /**
     * Byte offsets to start from, one per stream.
     *
     * @param stdout where stdout starts
     * @param stderr where stderr starts
     */
    record Offsets(long stdout, long stderr) {
        /**
         * Reads {@code OFFSET} (both streams), {@code OUT,ERR}, or the named form {@code stdout=OUT,stderr=ERR}, in
         * either order, where a stream left out starts at 0.
         */
        static final class Converter implements ITypeConverter<Offsets> {
            @Override
            public Offsets convert(String text) {
                String[] parts = text.split(",", -1);
                if (parts.length > 2) {
                    throw new TypeConversionException(
                            "expected OFFSET, OUT,ERR or stdout=OUT,stderr=ERR, got '" + text + "'");
                }
                if (text.contains("=")) {
                    return named(parts, text);
                }
                long out = Values.wholeNumber(parts[0], text);
                return new Offsets(out, parts.length == 1 ? out : Values.wholeNumber(parts[1], text));
            }

            private static Offsets named(String[] parts, String text) {
                Long out = null;
                Long err = null;
                for (String part : parts) {
                    int eq = part.indexOf('=');
                    String name = eq < 0 ? part : part.substring(0, eq);
                    if (eq < 0 || !(name.equals("stdout") || name.equals("stderr"))) {
                        throw new TypeConversionException(
                                "expected stdout=OUT and/or stderr=ERR, got '" + part + "' in '" + text + "'");
                    }
                    long value = Values.wholeNumber(part.substring(eq + 1), text);
                    if (name.equals("stdout") ? out != null : err != null) {
                        throw new TypeConversionException(name + " is given twice in '" + text + "'");
                    }
                    if (name.equals("stdout")) {
                        out = value;
                    } else {
                        err = value;
                    }
                }
                return new Offsets(out == null ? 0 : out, err == null ? 0 : err);
            }
        }
    }

    @Override
    void validate() {
        super.validate();
        if (from != null && (fromStdout != null || fromStderr != null)) {
            throw usageError("--from and --from-stdout/--from-stderr do not go together: use one form");
        }
        if (from == null) {
            from = new Offsets(fromStdout == null ? 0 : fromStdout, fromStderr == null ? 0 : fromStderr);
        }
    }

    @Override
    int execute() throws UsageException {
        // following waits for the process, however long it takes; each event of it is short
        try (SessionSource source = sessions();
                SandboxClient client = source.attach(session, CommandInSession.UNBOUNDED)) {
            return run(client, cli.out, cli.err);
        }
    }

    int run(SandboxClient client, PrintStream out, PrintStream err) {
        BackgroundProcessHandle handle = client.process().process(process);
        LineSink stdout = new LineSink(out);
        LineSink stderr = new LineSink(err);
        int code = 0;
        try (ProcessOutput events =
                follow ? handle.output(from.stdout(), from.stderr()) : handle.snapshot(from.stdout(), from.stderr())) {
            Iterator<ExecEvent> it = events.iterator();
            while (it.hasNext()) {
                switch (it.next()) {
                    case ExecEvent.Stdout line -> stdout.write(line);
                    case ExecEvent.Stderr line -> stderr.write(line);
                    case ExecEvent.Chunk chunk ->
                        (chunk.stream() == ExecEvent.StreamKind.STDOUT ? stdout : stderr).write(chunk);
                    case ExecEvent.Exit exit -> code = follow ? exit.code() : 0;
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
