package dev.sandbox.samples.cli;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.mcp.SandboxMcpServer;
import dev.sandbox.tools.ToolLimits;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sandbox mcp}: an MCP server ({@link SandboxMcpServer}) on stdin and stdout, for an MCP client that launches
 * it (a desktop assistant, an IDE, an agent framework). Its tools create sessions of the chosen provider, run commands
 * and code in them and read, write and list their files. Stdout carries only MCP messages (JSON-RPC, one per line);
 * everything else goes to stderr. It runs until stdin ends or SIGINT/SIGTERM, then destroys the sessions its client
 * created and exits 0.
 */
@Command(
        name = "mcp",
        customSynopsis = {"sandbox mcp [PROVIDER] [--max-sessions N] [--lifetime D] [--timeout D] [--max-output SIZE]"},
        description = {
            "Serves an MCP server on stdin/stdout (JSON-RPC lines; nothing else is written to stdout) whose tools"
                    + " create sessions of the chosen provider (create_session, list_sessions, destroy_session), run"
                    + " commands and code in them (run_command, run_code; output streamed as progress) and read,"
                    + " write and list their files (read_file, write_file, list_files). Runs until stdin ends or"
                    + " SIGINT/SIGTERM, then destroys the sessions it created."
        })
final class McpCommand extends SessionSubcommand {
    @Option(
            names = "--max-sessions",
            paramLabel = "N",
            converter = Values.WholeNumber.class,
            description = "the most sessions the tools keep at once [8]")
    long maxSessions = 8;

    @Option(names = "--lifetime", paramLabel = "D", description = "end each session after D [5m]")
    Duration lifetime;

    @Option(
            names = "--timeout",
            paramLabel = "D",
            description = "kill a command after D; a call's timeout_seconds may only shorten it [60s]")
    Duration timeout;

    @Option(
            names = "--max-output",
            paramLabel = "SIZE",
            converter = Values.Size.class,
            description = "keep at most SIZE of each output stream in an answer, with an optional k or m suffix [16k]")
    Long maxOutput;

    @Override
    int execute() throws UsageException {
        if (maxSessions < 1 || maxSessions > 1024) {
            throw usageError("--max-sessions must be from 1 to 1024, got " + maxSessions);
        }
        ToolLimits limits = ToolLimits.defaults();
        SessionOptions options = SessionOptions.defaults();
        try {
            if (timeout != null) {
                limits = limits.withTimeout(timeout);
            }
            if (maxOutput != null) {
                if (maxOutput > ToolLimits.MAX_BYTES) {
                    throw usageError("--max-output must be at most " + ToolLimits.MAX_BYTES + ", got " + maxOutput);
                }
                limits = limits.withMaxOutputBytes(maxOutput.intValue());
            }
            if (lifetime != null) {
                options = options.withLifetime(lifetime).validate();
            }
        } catch (dev.sandbox.InvalidArgumentException e) {
            throw usageError(e.getMessage());
        }
        SandboxProvider sessions = provider();
        SandboxMcpServer mcp = SandboxMcpServer.builder(sessions)
                .limits(limits)
                .sessionOptions(options)
                .maxSessions((int) maxSessions)
                .build();
        // Stdin's end and a signal race: an MCP client closes stdin and sends SIGTERM a moment later. Whichever comes
        // first starts the one close (the MCP transports, then the sessions, then the provider); the other waits for
        // it,
        // so the JVM never halts in the middle of destroying the sessions (on the remote provider that is HTTP calls).
        Ending ending = new Ending(() -> {
            try {
                mcp.close();
            } finally {
                sessions.close();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(ending::run, "sandbox-mcp-shutdown"));
        PrintStream stdout = cli.out;
        PrintStream previous = System.out;
        System.setOut(cli.err); // a stray print would corrupt the JSON-RPC stream: only MCP messages go to stdout
        boolean interrupted = false;
        try {
            mcp.serveStdio(System.in, stdout);
        } catch (InterruptedException e) {
            interrupted = true; // set again after the close, whose waits would fail at once on an interrupted thread
        } finally {
            System.setOut(previous);
        }
        ending.run();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /**
     * The close that runs once, from the thread that gets there first (the main thread at stdin's end, or the
     * shutdown hook on a signal); a later caller waits until it has finished, at most {@link #WAIT}.
     */
    static final class Ending {
        /** Longer than the server's own bounds: 5 s per MCP transport and 30 s to destroy the sessions. */
        static final Duration WAIT = Duration.ofSeconds(60);

        private final Runnable close;
        private final AtomicBoolean started = new AtomicBoolean();
        private final CountDownLatch finished = new CountDownLatch(1);

        Ending(Runnable close) {
            this.close = close;
        }

        /** Runs the close, or waits for the run already under way. */
        void run() {
            if (!started.compareAndSet(false, true)) {
                try {
                    finished.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            try {
                close.run();
            } finally {
                finished.countDown();
            }
        }
    }

    /** The chosen provider, for as long as the server runs. */
    private SandboxProvider provider() throws UsageException {
        return switch (provider.name()) {
            case "local" -> LocalSandboxProvider.create();
            case "docker" -> DockerSessionSource.serving(provider);
            case "remote" -> RemoteSessionSource.provider(provider);
            default -> throw new IllegalArgumentException("unknown provider " + provider.name());
        };
    }
}
