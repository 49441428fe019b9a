package dev.sandbox.samples.cli;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.blocking.SandboxInterruptedException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * What {@code exec} and {@code run} share: CMD after {@code --}, its workdir and environment (those of a new session,
 * or of the command alone in an existing one), the new session's lifetime, the command's timeouts, and running it in
 * the foreground. While it runs, a JVM shutdown hook (SIGINT, SIGTERM) stops it: it interrupts the command's wait,
 * which cancels the command (the provider kills it), and waits a bounded time for the CLI to close the client (which
 * destroys a new session) and the provider (which lets the cancellation reach the sandbox). So neither a one-shot
 * command nor one in an existing session ({@code --session}) outlives a terminated CLI.
 */
abstract class CommandInSession extends SessionSubcommand {
    /** The exit code of a command killed with SIGKILL. */
    private static final int KILLED = 128 + 9;

    /** How long past the command's own timeout the CLI waits before giving up on the sandbox itself. */
    private static final Duration GRACE = Duration.ofSeconds(30);

    /** The wait limit when the command has no timeout: practically none. */
    static final Duration UNBOUNDED = Duration.ofDays(36_500);

    /** The exit code of a command the CLI stopped on SIGINT (the JVM exits with the signal's own code anyway). */
    static final int INTERRUPTED = 128 + 2;

    /** How long the shutdown hook waits for the command to be stopped and the session released. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(20);

    @Option(
            names = "--workdir",
            paramLabel = "DIR",
            description = "run in DIR (must exist; kept) instead of a fresh temporary directory (deleted afterwards);"
                    + " with --session, an absolute directory in the session")
    String workdirArgument;

    @Option(
            names = "--env",
            paramLabel = "NAME=VALUE",
            converter = Values.KeyValue.Converter.class,
            description = "set an environment variable; may be repeated")
    List<Values.KeyValue> env = List.of();

    /** The workdir, known after {@link #validate()}: a local directory made absolute, or one in the session. */
    String workdir;

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

    /** How the command ended, set by {@link #run} when it knows: says on stderr that a timeout killed it. */
    ExecEvent.Termination termination;

    @Override
    void validate() {
        super.validate();
        command = afterDashes(args);
        if (command == null) {
            throw usageError("missing -- before the command");
        }
        if (session != null && lifetime != null) {
            throw usageError("--lifetime sets up a new session; with --session the session exists");
        }
        workdir = workdirArgument == null ? null : workdir(workdirArgument);
    }

    /** {@code --workdir}: a local directory for a new session, or an absolute directory in an existing one. */
    private String workdir(String text) {
        if (session == null) {
            try {
                return new Values.AbsoluteDirectory().convert(text);
            } catch (picocli.CommandLine.TypeConversionException e) {
                throw usageError("Invalid value for option '--workdir': " + e.getMessage());
            }
        }
        if (!text.startsWith("/")) {
            throw usageError(
                    "--workdir with --session is a directory in the session and must be absolute, got '" + text + "'");
        }
        return text;
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

    /** A new session's options: the workdir and environment are the session's. */
    SessionOptions sessionOptions() {
        SessionOptions options = SessionOptions.defaults().withEnv(environment());
        return workdir == null ? options : options.withWorkdir(workdir);
    }

    /** The command's options; in an existing session the workdir and environment are the command's own. */
    ExecOptions execOptions() {
        ExecOptions options = ExecOptions.of(command).withTimeout(timeout).withIdleTimeout(idleTimeout);
        if (session != null) {
            options = options.withEnv(environment());
            if (workdir != null) {
                options = options.withCwd(workdir);
            }
        }
        return options;
    }

    @Override
    int execute() throws UsageException {
        // a new session ends with the command, so it needs no lifetime of its own unless one is asked for
        SessionOptions options = sessionOptions();
        options = lifetime == null ? options.withUnlimitedLifetime() : options.withLifetime(lifetime);
        // the command's own --timeout ends it with 124; the client's limit only guards against a stuck sandbox
        Duration wait = timeout == null ? UNBOUNDED : timeout.plus(GRACE);
        Thread main = Thread.currentThread();
        CountDownLatch released = new CountDownLatch(1);
        Interruption interruption = new Interruption(main);
        try (SessionSource source = sessions();
                SandboxClient client = session == null ? source.create(options, wait) : source.attach(session, wait)) {
            // SIGINT or SIGTERM: cancel the command by interrupting its wait, then let this thread close the client
            // and the provider (below), which gets the cancellation to the sandbox; a stuck close is cut short
            Runnable closeClient = client::close;
            Thread hook = new Thread(
                    () -> {
                        interruption.stop();
                        try {
                            if (!released.await(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                                closeClient.run();
                            }
                        } catch (InterruptedException | RuntimeException e) {
                            // the JVM is going down; nothing else can be done
                        }
                    },
                    "sandbox-cli-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                if (!interruption.enter()) {
                    return INTERRUPTED;
                }
                int code;
                try {
                    code = run(client, execOptions());
                    code = code == KILLED ? explainKill(client, cli.err) : code;
                } catch (SessionClosedException e) {
                    // the session's end cut the command: by its lifetime or idle timeout, that is this CLI's timeout
                    if (!endedByATimer(e)) {
                        throw e;
                    }
                    code = SandboxCli.fail(
                            cli.err, e.getMessage() + "; the command was killed", SandboxCli.EXIT_TIMEOUT);
                } catch (SandboxInterruptedException e) {
                    if (!interruption.leave()) {
                        throw e;
                    }
                    return INTERRUPTED; // the command is cancelled; the closes below get that to the sandbox
                }
                if (interruption.leave()) {
                    return INTERRUPTED;
                }
                if (termination == ExecEvent.Termination.TIMED_OUT && timeout != null) {
                    SandboxCli.fail(cli.err, "timed out after " + Durations.format(timeout) + "; killed", code);
                } else if (termination == ExecEvent.Termination.IDLE_TIMED_OUT && idleTimeout != null) {
                    SandboxCli.fail(
                            cli.err, "timed out: no output for " + Durations.format(idleTimeout) + "; killed", code);
                }
                return code;
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running: it waits for the closes below
                }
            }
        } finally {
            released.countDown();
        }
    }

    /**
     * The shutdown hook's interrupt of the thread running the command: it lands only while the command runs, so
     * that the closes after it (which wait, and fail at once on an interrupted thread) are never cut short.
     */
    private static final class Interruption {
        private final Thread runner;
        private boolean stopping;
        private boolean running;

        Interruption(Thread runner) {
            this.runner = runner;
        }

        /** From the hook: stop the command if it runs, and keep it from starting. */
        synchronized void stop() {
            stopping = true;
            if (running) {
                runner.interrupt();
            }
        }

        /** Before the command: {@code false} when the CLI is stopping already. */
        synchronized boolean enter() {
            running = !stopping;
            return running;
        }

        /**
         * After the command, on its thread: no interrupt can come any more, and one that came is cleared.
         *
         * @return whether the hook stopped the command
         */
        synchronized boolean leave() {
            running = false;
            if (stopping) {
                Thread.interrupted();
            }
            return stopping;
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
            if (endedByATimer(e)) {
                return SandboxCli.fail(err, e.getMessage() + "; the command was killed", SandboxCli.EXIT_TIMEOUT);
            }
        }
        return KILLED;
    }

    private static boolean endedByATimer(SessionClosedException e) {
        return e.reason() == SessionEndReason.LIFETIME_EXPIRED || e.reason() == SessionEndReason.IDLE_TIMEOUT;
    }
}
