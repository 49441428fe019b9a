package dev.sandbox.samples.cli;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.ExecStream;
import dev.sandbox.blocking.SandboxClient;
import java.util.Iterator;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sandbox exec}: copies the command's lines to stdout and stderr as they arrive. Output is buffered and flushed
 * only when no further event is waiting, so a lone line shows at once and bulk output is written in large blocks. With
 * {@code --background}, starts the command in the background instead ({@link BackgroundCommand}): in a new session
 * that outlives the CLI, or with {@code --session} in an existing one.
 */
@Command(
        name = "exec",
        customSynopsis = "sandbox exec [OPTIONS] [--session SESSION] [--background [--label K=V]...] -- CMD [ARG...]",
        description = {
            "Runs CMD in a new sandbox session, destroyed when it ends (or, with --session, in an existing one),"
                    + " streams CMD's stdout to stdout and its stderr to stderr, line by line as they are written,"
                    + " and exits with CMD's exit code.",
            "With --background, starts CMD in a new session that stays (or, with --session, in an existing one),"
                    + " prints \"SESSION PROCESS\" (the ids sandbox logs takes) and exits 0."
        })
final class ExecCommand extends CommandInSession {
    @Option(
            names = "--background",
            arity = "0",
            description =
                    "start CMD in the background, in a new session that stays (docker, remote) [lifetime 5m], or in"
                            + " the --session given; print SESSION PROCESS")
    boolean background;

    /**
     * Labels of the session {@code --background} makes, as {@code create --label} gives them: background processes have
     * no labels of their own, and {@code sandbox ls --label K=V} finds the session (and with it the process) later.
     */
    @Option(
            names = "--label",
            paramLabel = "K=V",
            converter = Values.KeyValue.Converter.class,
            description = "with --background: label the new session (sandbox ls --label finds it); may be repeated")
    List<Values.KeyValue> labels = List.of();

    /** {@code run}'s option, accepted only to say so. */
    @Option(names = "--max-output", hidden = true)
    String maxOutput;

    @Override
    void validate() {
        if (maxOutput != null) {
            throw usageError("--max-output applies to 'sandbox run' only");
        }
        super.validate();
        if (!labels.isEmpty() && session != null) {
            throw usageError("--label labels the session --background makes; session '" + session
                    + "' exists already (label a session when you make it: sandbox create --label K=V)");
        }
        if (!labels.isEmpty() && !background) {
            throw usageError("--label labels the session --background makes; without --background the session ends"
                    + " with the command (or, with --session, exists already)");
        }
    }

    @Override
    int execute() throws UsageException {
        if (!background) {
            return super.execute();
        }
        if (session != null) {
            // the command's --env and --workdir are its own (execOptions); the session stays as it is
            try (SessionSource source = sessions();
                    SandboxClient client = source.attach(session, SandboxClient.DEFAULT_TIMEOUT)) {
                return BackgroundCommand.run(client, execOptions(), cli.out);
            }
        }
        SessionOptions options =
                lifetime == null ? sessionOptions() : sessionOptions().withLifetime(lifetime);
        for (Values.KeyValue label : labels) {
            options = options.withLabel(label.name(), label.value());
        }
        try (SessionSource source = sessions();
                SandboxClient client = source.createDetached(options, SandboxClient.DEFAULT_TIMEOUT)) {
            return BackgroundCommand.run(client, execOptions(), cli.out);
        }
    }

    @Override
    int run(SandboxClient client, ExecOptions options) {
        LineSink stdout = new LineSink(cli.out);
        LineSink stderr = new LineSink(cli.err);
        int code = SandboxCli.EXIT_ERROR;
        try (ExecStream events = client.process().exec(options)) {
            Iterator<ExecEvent> it = events.iterator();
            while (it.hasNext()) {
                switch (it.next()) {
                    case ExecEvent.Stdout line -> stdout.write(line);
                    case ExecEvent.Stderr line -> stderr.write(line);
                    case ExecEvent.Chunk chunk ->
                        (chunk.stream() == ExecEvent.StreamKind.STDOUT ? stdout : stderr).write(chunk);
                    case ExecEvent.Exit exit -> {
                        code = exit.code();
                        termination = exit.termination();
                    }
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
