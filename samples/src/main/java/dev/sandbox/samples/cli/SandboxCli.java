package dev.sandbox.samples.cli;

import dev.sandbox.ExecOptions;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.time.Duration;

/**
 * The {@code sandbox} command: runs one command in a fresh sandbox session through the blocking {@link
 * SandboxClient}, streaming its output ({@code exec}) or printing it as JSON ({@code run}), and exits with the
 * command's exit code. {@code sandbox --help} prints the usage.
 *
 * <p>Exit codes: the command's own; 124 when it timed out; 2 for a usage error; 127 when the command could not be
 * started; 1 for any other sandbox error.
 *
 * <pre>{@code
 * java -jar sandbox.jar exec --timeout 10s --env GREETING=hi -- sh -c 'echo $GREETING'
 * java -jar sandbox.jar run --max-output 4096 -- python3 -V
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

    /** How long past the command's own timeout the CLI waits before giving up on the sandbox itself. */
    private static final Duration GRACE = Duration.ofSeconds(30);

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
            err.println("sandbox: " + e.getMessage());
            err.println();
            err.print(CommandLine.USAGE);
            err.flush();
            return EXIT_USAGE;
        }
        if (cl.mode() == CommandLine.Mode.HELP) {
            out.print(CommandLine.USAGE);
            out.flush();
            return 0;
        }
        try {
            return execute(cl, out, err);
        } catch (ProcessLaunchException e) {
            return fail(err, e, EXIT_LAUNCH_FAILED);
        } catch (SandboxTimeoutException e) {
            return fail(err, e, EXIT_TIMEOUT);
        } catch (SandboxException e) {
            return fail(err, e, EXIT_ERROR);
        }
    }

    private static int execute(CommandLine cl, PrintStream out, PrintStream err) {
        SessionOptions session = SessionOptions.defaults().withEnv(cl.env());
        if (cl.workdir() != null) {
            session = session.withWorkdir(cl.workdir());
        }
        ExecOptions options =
                ExecOptions.of(cl.command()).withTimeout(cl.timeout()).withIdleTimeout(cl.idleTimeout());
        if (cl.maxOutput() != null) {
            options = options.withMaxOutputBytes(cl.maxOutput());
        }
        // the command's own --timeout ends it with 124; the client's limit only guards against a stuck sandbox
        Duration wait = cl.timeout() == null ? UNBOUNDED : cl.timeout().plus(GRACE);
        try (SandboxClient client = open(cl.provider(), session, wait)) {
            Thread hook = new Thread(client::close, "sandbox-cli-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                return switch (cl.mode()) {
                    case EXEC -> ExecCommand.run(client, options, out, err);
                    case RUN -> RunCommand.run(client, options, out);
                    case HELP -> throw new IllegalStateException("help is handled before a session is made");
                };
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running or has run: it closes the client
                }
            }
        }
    }

    private static SandboxClient open(String provider, SessionOptions session, Duration wait) {
        if (!provider.equals("local")) { // the parser accepts only known providers
            throw new IllegalArgumentException("unknown provider " + provider);
        }
        return SandboxClient.builder().defaultTimeout(wait).local(session);
    }

    private static int fail(PrintStream err, SandboxException e, int code) {
        err.println("sandbox: " + e.getMessage());
        err.flush();
        return code;
    }
}
