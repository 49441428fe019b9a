package dev.sandbox.samples.cli;

import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import picocli.CommandLine;

/**
 * The {@code sandbox} command: runs one command in a fresh sandbox session through the blocking {@link
 * SandboxClient}, streaming its output ({@code exec}) or printing it as JSON ({@code run}), and exits with the
 * command's exit code. {@code sandbox --help} prints the usage, {@code sandbox SUBCOMMAND --help} a subcommand's, and
 * {@code sandbox --version} the SDK's version; {@code sandbox generate-completion} prints a bash and zsh completion
 * script. The command line is parsed by picocli ({@link SandboxCommand}).
 *
 * <p>{@code create}, {@code ls}, {@code destroy}, {@code snapshot}, {@code exec --session}, {@code exec --background},
 * {@code logs}, {@code cp}, {@code ls-files} and {@code port-forward} work with sessions that outlive one CLI run; they get their sessions
 * from a {@link SessionSource}: Docker's ({@code --provider docker --image IMAGE ...}) or the remote provider's ({@code
 * --provider remote --url URL --token-file FILE}, a server started with {@code sandbox serve}), while the local
 * provider's source explains that its sessions end with the CLI (exit 2). {@code shell} runs an interactive terminal
 * in a session.
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
        // docker-java logs the failures it also throws (with stack traces); the CLI prints each error once, one line
        if (System.getProperty("org.slf4j.simpleLogger.log.com.github.dockerjava") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.com.github.dockerjava", "off");
        }
        // so does fabric8 (a refused watch is logged with its trace, then thrown as KubernetesForbiddenException)
        if (System.getProperty("org.slf4j.simpleLogger.log.io.fabric8") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.io.fabric8", "off");
        }
        int code = run(args, System.out, System.err);
        System.exit(code);
    }

    /**
     * Runs the CLI: parses {@code args}, runs the command, writes to {@code out} and {@code err}, and returns the
     * exit code. While the command runs, a JVM shutdown hook (SIGINT, SIGTERM) kills it: it destroys a session made
     * for the command, and cancels a command run in an existing session ({@code --session}), so a terminated CLI does
     * not leave the command running.
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
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help"))) {
            // the overview is fixed text: printed without building the command line (picocli's model), which
            // would double the time sandbox --help takes
            out.print(SandboxCommand.USAGE);
            out.flush();
            return 0;
        }
        CommandLine commandLine = new SandboxCommand(out, err).commandLine(args);
        try {
            return commandLine.execute(args);
        } finally {
            commandLine.getOut().flush();
            commandLine.getErr().flush();
            out.flush();
            err.flush();
        }
    }

    /** Prints {@code sandbox: MESSAGE} and returns {@code code}. */
    static int fail(PrintStream err, String message, int code) {
        err.println("sandbox: " + message);
        err.flush();
        return code;
    }
}
