package dev.sandbox.samples.cli;

import dev.sandbox.ExecOptions;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.time.Duration;

/**
 * The {@code sandbox} command: runs one command in a fresh sandbox session through the blocking {@link
 * SandboxClient}, streaming its output ({@code exec}) or printing it as JSON ({@code run}), and exits with the
 * command's exit code. {@code sandbox --help} prints the usage.
 *
 * <p>{@code create}, {@code ls}, {@code destroy}, {@code snapshot}, {@code exec --session}, {@code exec --background},
 * {@code logs}, {@code cp} and {@code ls-files} work with sessions that outlive one CLI run; they get their sessions
 * from a {@link SessionSource}: Docker's ({@code --provider docker --image IMAGE ...}) or the remote provider's ({@code
 * --provider remote --url URL --token-file FILE}, a server started with {@code sandbox serve}), while the local
 * provider's source explains that its sessions end with the CLI (exit 2). {@code shell} runs an interactive terminal in a session.
 *
 * <p>Exit codes: the command's own; 124 when it timed out; 2 for a usage error or a command the provider cannot do;
 * 127 when the command could not be started; 1 for any other sandbox error.
 *
 * <pre>{@code
 * java -jar sandbox.jar exec --timeout 10s --env GREETING=hi -- sh -c 'echo $GREETING'
 * java -jar sandbox.jar run --max-output 4096 -- python3 -V
 * java -jar sandbox.jar create --provider docker --image python:3.12-slim --memory 512m --label team=search
 * java -jar sandbox.jar exec --provider docker --session docker-1f2e3d4c5b6a7988 -- python3 -V
 * java -jar sandbox.jar serve --port 7070 --token-file token &
 * java -jar sandbox.jar exec --provider remote --url http://127.0.0.1:7070 --token-file token --background -- sleep 60
 * java -jar sandbox.jar shell --provider remote --url http://127.0.0.1:7070 --token-file token
 * }</pre>
 */
public final class SandboxCli {
    /** Exit code for a usage error. */
    static final int EXIT_USAGE = 2;

    /** Exit code when the command could not be started. */
    static final int EXIT_LAUNCH_FAILED = 127;

    /** Exit code when the command timed out. */
    static final int EXIT_TIMEOUT = 124;

    /** Exit code for any other sandbox error. */
    static final int EXIT_ERROR = 1;

    /** The exit code of a command killed with SIGKILL. */
    private static final int KILLED = 128 + 9;

    /** How long past the command's own timeout the CLI waits before giving up on the sandbox itself. */
    private static final Duration GRACE = Duration.ofSeconds(30);

    /** How long create, ls, destroy may take: a container start on a busy daemon included. */
    private static final Duration CONTROL_WAIT = Duration.ofMinutes(2);

    /** The wait limit when the command has no timeout: practically none. */
    private static final Duration UNBOUNDED = Duration.ofDays(36_500);

    private SandboxCli() {}

    /**
     * Runs the CLI with the process's stdout and stderr and exits with its exit code.
     *
     * <pre>{@code
     * SandboxCli.main(new String[] {"exec", "--", "uname", "-a"});
     * }</pre>
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        // the local provider's "no isolation" warning would be mixed into the command's stderr; -D can restore it
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        }
        int code = run(args, System.out, System.err);
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /**
     * Runs the CLI: parses {@code args}, runs the command, writes to {@code out} and {@code err}, and returns the
     * exit code. While the command runs, a JVM shutdown hook destroys the session, so a terminated CLI does not leave
     * the command running.
     *
     * <pre>{@code
     * int code = SandboxCli.run(new String[] {"run", "--", "echo", "hi"}, System.out, System.err);
     * }</pre>
     *
     * @param args the command line, without the program name
     * @param out where the command's stdout (or the JSON, or the help) goes
     * @param err where the command's stderr and the CLI's own messages go
     * @return the exit code
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        CommandLine cl;
        try {
            cl = CommandLine.parse(args);
        } catch (UsageException e) {
            return usageError(err, e);
        }
        if (cl instanceof CommandLine.Help) {
            out.print(CommandLine.USAGE);
            out.flush();
            return 0;
        }
        try {
            return execute(cl, out, err);
        } catch (UsageException e) {
            return usageError(err, e);
        } catch (ProcessLaunchException e) {
            return fail(err, e, EXIT_LAUNCH_FAILED);
        } catch (SandboxTimeoutException e) {
            return fail(err, e, EXIT_TIMEOUT);
        } catch (SandboxException e) {
            return fail(err, e, EXIT_ERROR);
        }
    }

    private static int execute(CommandLine cl, PrintStream out, PrintStream err) throws UsageException {
        return switch (cl) {
            case CommandLine.Exec exec when exec.background() -> background(exec, out);
            case CommandLine.Exec exec -> foreground(exec, out, err);
            case CommandLine.Logs logs -> {
                // following waits for the process, however long it takes; each event of it is short
                try (SessionSource source = SessionSource.forProvider(logs.provider());
                        SandboxClient client = source.attach(logs.session(), UNBOUNDED)) {
                    yield LogsCommand.run(client, logs, out, err);
                }
            }
            case CommandLine.Copy copy -> {
                try (SessionSource source = SessionSource.forProvider(copy.provider());
                        SandboxClient client = source.attach(copy.session(), SandboxClient.DEFAULT_TIMEOUT)) {
                    yield CopyCommand.run(client, copy);
                }
            }
            case CommandLine.ListFiles ls -> {
                try (SessionSource source = SessionSource.forProvider(ls.provider());
                        SandboxClient client = source.attach(ls.location().session(), SandboxClient.DEFAULT_TIMEOUT)) {
                    yield ListFilesCommand.run(client, ls, out);
                }
            }
            case CommandLine.Shell shell -> {
                Tty tty = Tty.open();
                try (SessionSource source = SessionSource.forProvider(shell.provider());
                        SessionSource.Lease lease = source.session(shell.session(), SandboxClient.DEFAULT_TIMEOUT)) {
                    yield ShellCommand.run(lease.session(), shell.command(), tty);
                }
            }
            case CommandLine.Serve serve -> ServeCommand.run(serve, out, err);
            case CommandLine.Create create -> {
                SessionOptions options = SessionOptions.defaults();
                for (var label : create.labels().entrySet()) {
                    options = options.withLabel(label.getKey(), label.getValue());
                }
                if (create.lifetime() != null) {
                    options = options.withLifetime(create.lifetime());
                }
                if (create.idleTimeout() != null) {
                    options = options.withIdleTimeout(create.idleTimeout());
                }
                try (SessionSource source = SessionSource.forProvider(create.provider())) {
                    out.println(source.createSession(options, create.fromSnapshot(), CONTROL_WAIT));
                    out.flush();
                    yield 0;
                }
            }
            case CommandLine.ListSessions ls -> {
                try (SessionSource source = SessionSource.forProvider(ls.provider())) {
                    for (SessionInfo info : source.list(ls.labels(), CONTROL_WAIT)) {
                        StringBuilder labels = new StringBuilder();
                        info.labels()
                                .forEach((k, v) -> labels.append(labels.isEmpty() ? "" : ",")
                                        .append(k)
                                        .append('=')
                                        .append(v));
                        out.println(info.id() + " " + info.provider() + " " + info.createdAt() + " "
                                + (labels.isEmpty() ? "-" : labels));
                    }
                    out.flush();
                    yield 0;
                }
            }
            case CommandLine.Destroy destroy -> {
                int code = 0;
                try (SessionSource source = SessionSource.forProvider(destroy.provider())) {
                    for (String id : destroy.sessions()) {
                        try {
                            source.destroy(id, CONTROL_WAIT);
                        } catch (SandboxException e) {
                            code = fail(err, e, EXIT_ERROR);
                        }
                    }
                }
                yield code;
            }
            case CommandLine.Snapshot snapshot -> {
                try (SessionSource source = SessionSource.forProvider(snapshot.provider())) {
                    out.println(source.snapshot(snapshot.session(), Duration.ofMinutes(10)));
                    out.flush();
                    yield 0;
                }
            }
            case CommandLine.Help help -> throw new IllegalStateException("help is handled before any session");
        };
    }

    private static SessionOptions sessionOptions(CommandLine.Exec cl) {
        SessionOptions session = SessionOptions.defaults().withEnv(cl.env());
        if (cl.workdir() != null) {
            session = session.withWorkdir(cl.workdir());
        }
        return session;
    }

    private static ExecOptions execOptions(CommandLine.Exec cl) {
        ExecOptions options =
                ExecOptions.of(cl.command()).withTimeout(cl.timeout()).withIdleTimeout(cl.idleTimeout());
        if (cl.maxOutput() != null) {
            options = options.withMaxOutputBytes(cl.maxOutput());
        }
        return options;
    }

    private static int background(CommandLine.Exec cl, PrintStream out) throws UsageException {
        SessionOptions session = sessionOptions(cl);
        if (cl.lifetime() != null) {
            session = session.withLifetime(cl.lifetime());
        }
        try (SessionSource source = SessionSource.forProvider(cl.provider());
                SandboxClient client = source.createDetached(session, SandboxClient.DEFAULT_TIMEOUT)) {
            return BackgroundCommand.run(client, execOptions(cl), out);
        }
    }

    private static int foreground(CommandLine.Exec cl, PrintStream out, PrintStream err) throws UsageException {
        // a new session ends with the command, so it needs no lifetime of its own unless one is asked for
        SessionOptions session = sessionOptions(cl);
        session = cl.lifetime() == null ? session.withUnlimitedLifetime() : session.withLifetime(cl.lifetime());
        ExecOptions options = execOptions(cl);
        // the command's own --timeout ends it with 124; the client's limit only guards against a stuck sandbox
        Duration wait = cl.timeout() == null ? UNBOUNDED : cl.timeout().plus(GRACE);
        try (SessionSource source = SessionSource.forProvider(cl.provider());
                SandboxClient client =
                        cl.session() == null ? source.create(session, wait) : source.attach(cl.session(), wait)) {
            Thread hook = new Thread(client::close, "sandbox-cli-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                int code = switch (cl.mode()) {
                    case EXEC -> ExecCommand.run(client, options, out, err);
                    case RUN -> RunCommand.run(client, options, out);
                };
                return code == KILLED ? explainKill(client, err) : code;
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
                err.println("sandbox: " + e.getMessage() + "; the command was killed");
                err.flush();
                return EXIT_TIMEOUT;
            }
        }
        return KILLED;
    }

    private static int usageError(PrintStream err, UsageException e) {
        err.println("sandbox: " + e.getMessage());
        if (e.showUsage()) {
            err.println();
            err.print(CommandLine.USAGE);
        }
        err.flush();
        return EXIT_USAGE;
    }

    private static int fail(PrintStream err, SandboxException e, int code) {
        err.println("sandbox: " + e.getMessage());
        err.flush();
        return code;
    }
}
