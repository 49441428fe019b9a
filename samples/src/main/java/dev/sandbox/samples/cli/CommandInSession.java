package dev.sandbox.samples.cli;

import dev.sandbox.ExecOptions;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * What {@code exec} and {@code run} share: CMD after {@code --}, the new session's workdir, environment and lifetime
 * (or an existing session), the command's timeouts, and running it in the foreground. While it runs, a JVM shutdown
 * hook closes the client, which destroys a new session, so a terminated CLI does not leave the command running.
 */
abstract class CommandInSession extends SessionSubcommand {
    /** The exit code of a command killed with SIGKILL. */
    private static final int KILLED = 128 + 9;

    /** How long past the command's own timeout the CLI waits before giving up on the sandbox itself. */
    private static final Duration GRACE = Duration.ofSeconds(30);

    /** The wait limit when the command has no timeout: practically none. */
    static final Duration UNBOUNDED = Duration.ofDays(36_500);

    @Option(
            names = "--workdir",
            paramLabel = "DIR",
            converter = Values.AbsoluteDirectory.class,
            description = "run in DIR (must exist; kept) instead of a fresh temporary directory (deleted afterwards)")
    String workdir;

    @Option(
            names = "--env",
            paramLabel = "NAME=VALUE",
            converter = Values.KeyValue.Converter.class,
            description = "set an environment variable; may be repeated")
    List<Values.KeyValue> env = List.of();

    @Option(names = "--timeout", paramLabel = "D", description = "kill CMD after D; exit code 124")
    Duration timeout;

    @Option(names = "--idle-timeout", paramLabel = "D", description = "kill CMD after D without output; exit code 124")
    Duration idleTimeout;

    @Option(
            names = "--lifetime",
            paramLabel = "D",
            description = "end the session after D, killing CMD (exit code 124) [as long as CMD runs]")
    Duration lifetime;

    @Option(
            names = "--session",
            paramLabel = "SESSION",
            converter = Values.NonBlank.class,
            description = "run CMD in this existing session, which stays (docker, remote)")
    String session;

    @Parameters(paramLabel = "CMD", arity = "0..*", description = "the command and its arguments, after --")
    List<String> args = List.of();

    /** CMD and its arguments, known after {@link #validate()}. */
    List<String> command;

    @Override
    void validate() {
        super.validate();
        command = afterDashes(args);
        if (command == null) {
            throw usageError("missing -- before the command");
        }
        if (session != null && (workdir != null || !env.isEmpty() || lifetime != null)) {
            throw usageError("--workdir, --env and --lifetime set up a new session; with --session the session exists");
        }
    }

    /**
     * Runs the command through the client.
     *
     * @param client the session's client
     * @param options the command
     * @return the exit code
     */
    abstract int run(SandboxClient client, ExecOptions options);

    /** The environment variables, in the order given; a repeated name keeps its last value. */
    Map<String, String> environment() {
        Map<String, String> vars = new LinkedHashMap<>();
        env.forEach(v -> vars.put(v.name(), v.value()));
        return vars;
    }

    SessionOptions sessionOptions() {
        SessionOptions options = SessionOptions.defaults().withEnv(environment());
        return workdir == null ? options : options.withWorkdir(workdir);
    }

    ExecOptions execOptions() {
        return ExecOptions.of(command).withTimeout(timeout).withIdleTimeout(idleTimeout);
    }

    @Override
    int execute() throws UsageException {
        // a new session ends with the command, so it needs no lifetime of its own unless one is asked for
        SessionOptions options = sessionOptions();
        options = lifetime == null ? options.withUnlimitedLifetime() : options.withLifetime(lifetime);
        // the command's own --timeout ends it with 124; the client's limit only guards against a stuck sandbox
        Duration wait = timeout == null ? UNBOUNDED : timeout.plus(GRACE);
        try (SessionSource source = sessions();
                SandboxClient client = session == null ? source.create(options, wait) : source.attach(session, wait)) {
            Thread hook = new Thread(client::close, "sandbox-cli-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                int code = run(client, execOptions());
                return code == KILLED ? explainKill(client, cli.err) : code;
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running or has run: it closes the client
                }
            }
        }
    }

    /**
     * The command was killed: when its session ended by its lifetime or idle timeout, says so and exits as for a
     * timeout; otherwise the kill came from elsewhere and its exit code stands.
     */
    private static int explainKill(SandboxClient client, PrintStream err) {
        try {
            client.ping();
        } catch (SessionClosedException e) {
            if (e.reason() == SessionEndReason.LIFETIME_EXPIRED || e.reason() == SessionEndReason.IDLE_TIMEOUT) {
                return SandboxCli.fail(err, e.getMessage() + "; the command was killed", SandboxCli.EXIT_TIMEOUT);
            }
        }
        return KILLED;
    }
}
