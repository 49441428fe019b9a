package dev.sandbox.samples.cli;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.mcp.SandboxMcpServer;
import dev.sandbox.tools.ToolLimits;
import java.io.PrintStream;
import java.time.Duration;
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
        Thread hook = new Thread(
                () -> {
                    try {
                        mcp.close();
                    } finally {
                        sessions.close();
                    }
                },
                "sandbox-mcp-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        PrintStream stdout = cli.out;
        PrintStream previous = System.out;
        System.setOut(cli.err); // a stray print would corrupt the JSON-RPC stream: only MCP messages go to stdout
        try {
            mcp.serveStdio(System.in, stdout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            System.setOut(previous);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            return 0; // the JVM is stopping: the hook destroys the sessions
        }
        hook.run();
        return 0;
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
