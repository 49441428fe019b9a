package dev.sandbox.samples.cli;

import dev.sandbox.SandboxException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.mcp.SandboxMcpServer;
import dev.sandbox.pool.SandboxPool;
import dev.sandbox.tools.ToolLimits;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Map;
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
 *
 * <p>Its tools run code a model wrote, so its default provider is an isolated one: without {@code --provider} it is
 * Docker when a daemon answers, else a refusal that says how to choose; the local provider (host processes, no
 * isolation) only when named, with a warning on stderr.
 */
@Command(
        name = "mcp",
        customSynopsis = {
            "sandbox mcp [PROVIDER] [--max-sessions N] [--lifetime D] [--timeout D] [--max-output SIZE] [--pool N]"
                    + " [--egress-allow RULE]..."
        },
        description = {
            "Serves an MCP server on stdin/stdout (JSON-RPC lines; nothing else is written to stdout) whose tools"
                    + " create sessions of the chosen provider (create_session, list_sessions, destroy_session), run"
                    + " commands and code in them (run_command, run_code; output streamed as progress) and read,"
                    + " write and list their files (read_file, write_file, list_files). Runs until stdin ends or"
                    + " SIGINT/SIGTERM, then destroys the sessions it created.",
            "The code a model writes runs there: without --provider it uses Docker when a daemon answers and refuses"
                    + " to start otherwise; --provider local (host processes, no isolation) only when named, with a"
                    + " warning."
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

    @Option(
            names = "--pool",
            paramLabel = "N",
            converter = Values.WholeNumber.class,
            description = "keep N sessions created ahead: create_session takes one at once, its labels and lifetime"
                    + " set then, and a fresh one takes its place; 0 for none [0]")
    long pool;

    @Option(
            names = "--egress-allow",
            paramLabel = "RULE",
            description = "let the sessions' programs reach RULE through the sandbox's egress proxy: a domain or an"
                    + " address block, then the ports it is for ('pypi.org 443', '10.0.0.0/8'); repeat for more."
                    + " The tools cannot change it [no egress]")
    java.util.List<String> egressAllow = new java.util.ArrayList<>();

    /** How long the default's probe waits for the Docker daemon's answer. */
    static final Duration PROBE = Duration.ofSeconds(10);

    /** Whether {@code --provider} was given; without it the default is Docker, the isolated provider, or nothing. */
    private boolean providerNamed() {
        return spec.commandLine().getParseResult().hasMatchedOption("--provider");
    }

    @Override
    void validate() {
        if (!providerNamed()) {
            providerOptions.name = "docker"; // so the Docker options (--image, --pull...) apply to the default
        }
        super.validate();
        String badPool = WarmPool.check(pool);
        if (badPool != null) {
            throw usageError(badPool);
        }
    }

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
            if (!egressAllow.isEmpty()) {
                dev.sandbox.NetworkPolicy policy = dev.sandbox.NetworkPolicy.allowlist();
                for (String rule : egressAllow) {
                    try {
                        policy = policy.withRule(dev.sandbox.EgressRule.parse(rule));
                    } catch (dev.sandbox.InvalidArgumentException e) {
                        throw usageError("--egress-allow '" + rule + "': " + e.getMessage());
                    }
                }
                options = options.withNetwork(policy);
            }
        } catch (dev.sandbox.InvalidArgumentException e) {
            throw usageError(e.getMessage());
        }
        SandboxProvider sessions = provider();
        if (!providerNamed()) {
            String refusal = dockerRefusal(sessions);
            if (refusal != null) {
                sessions.close();
                return SandboxCli.fail(cli.err, refusal, SandboxCli.EXIT_ERROR);
            }
        } else if (provider.name().equals("local")) {
            cli.err.println("sandbox: warning: --provider local runs the model's commands as host processes of this"
                    + " user, without isolation (they can read and change whatever you can); --provider docker runs"
                    + " each session in a container");
            cli.err.flush();
        }
        SandboxPool warm = pool == 0 ? null : WarmPool.start(sessions, options, (int) pool, (int) maxSessions);
        SandboxMcpServer.Builder builder = SandboxMcpServer.builder(sessions)
                .limits(limits)
                .sessionOptions(options)
                .maxSessions((int) maxSessions);
        if (warm != null) {
            builder.pool(warm);
        }
        SandboxMcpServer mcp = builder.build();
        // Stdin's end and a signal race: an MCP client closes stdin and sends SIGTERM a moment later. Whichever comes
        // first starts the one close (the MCP transports, then the sessions, then the provider); the other waits for
        // it,
        // so the JVM never halts in the middle of destroying the sessions (on the remote provider that is HTTP calls).
        Ending ending = new Ending(() -> {
            try {
                mcp.close();
                if (warm != null) {
                    WarmPool.close(warm); // after the server gave its sessions back
                }
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

    /**
     * Why the default, Docker, cannot serve: {@code null} when its daemon answers a listing within {@link #PROBE}.
     */
    private static String dockerRefusal(SandboxProvider docker) {
        String reason;
        try {
            docker.list(Map.of()).take(1).then().block(PROBE);
            return null;
        } catch (SandboxException e) {
            reason = e.getMessage();
        } catch (IllegalStateException e) { // block's timeout
            reason = "the Docker daemon did not answer within " + PROBE.toSeconds() + " s";
        }
        return "sandbox mcp runs the code a model writes, so without --provider it uses Docker, and no Docker daemon"
                + " answers (" + reason + "). Start Docker or set DOCKER_HOST, or choose a provider: --provider"
                + " docker|kubernetes|remote|local (kubernetes: pods in the cluster of KUBECONFIG; remote: a sandbox serve, with --url and --token-file; local: host processes"
                + " of your user, without isolation)";
    }

    /** The chosen provider, for as long as the server runs. */
    private SandboxProvider provider() throws UsageException {
        return switch (provider.name()) {
            case "local" -> LocalSandboxProvider.create();
            case "docker" -> DockerSessionSource.serving(provider);
            case "kubernetes" -> KubernetesSessionSource.serving(provider);
            case "remote" -> RemoteSessionSource.provider(provider);
            default -> throw new IllegalArgumentException("unknown provider " + provider.name());
        };
    }
}
