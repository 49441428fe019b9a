package dev.sandbox.samples.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parsed {@code sandbox} command line.
 *
 * @param mode what to do
 * @param provider the provider's name
 * @param workdir the session's workdir as an absolute path, or {@code null} for a fresh one
 * @param env environment variables for the session, in the order given
 * @param timeout the command's timeout, or {@code null}
 * @param idleTimeout the command's idle timeout, or {@code null}
 * @param maxOutput the per-stream cap of {@code run}, or {@code null} for the SDK's default
 * @param command the program and its arguments (empty for help)
 */
record CommandLine(
        Mode mode,
        String provider,
        String workdir,
        Map<String, String> env,
        Duration timeout,
        Duration idleTimeout,
        Long maxOutput,
        List<String> command) {

    /** What the command line asks for. */
    enum Mode {
        /** Print the usage. */
        HELP,
        /** Stream the command's output as it happens. */
        EXEC,
        /** Collect the command's output and print it as JSON. */
        RUN
    }

    /** The providers the CLI knows. */
    static final List<String> PROVIDERS = List.of("local");

    static final String USAGE = """
            usage: sandbox exec [OPTIONS] -- CMD [ARG...]
                   sandbox run [OPTIONS] [--max-output BYTES] -- CMD [ARG...]
                   sandbox --help

            Runs CMD in a new sandbox session, then destroys the session.
              exec   streams CMD's stdout to stdout and its stderr to stderr, line by line as
                     they are written, and exits with CMD's exit code
              run    waits for CMD and prints one JSON object to stdout: exitCode, stdout,
                     stderr, stdoutTruncated, stderrTruncated, durationMs (and stdoutBytes,
                     stderrBytes, termination); exits with CMD's exit code

            options:
              --provider NAME     where to run: local (host processes, no isolation) [local]
              --workdir DIR       run in DIR (must exist; kept) instead of a fresh temporary
                                  directory (deleted afterwards)
              --env NAME=VALUE    set an environment variable; may be repeated
              --timeout D         kill CMD after D; exit code 124
              --idle-timeout D    kill CMD after D without output; exit code 124
              --max-output BYTES  run only: keep at most BYTES of each stream [1048576]
              -h, --help          print this help

            D is a whole number with a unit: 500ms, 10s, 2m, 1h.
            CMD's stdin is empty. Output is passed on as lines: a last line without a newline
            gets one.

            exit codes: CMD's own; 124 timeout; 2 usage error; 127 CMD could not be started;
            1 other sandbox error
            """;

    /**
     * Parses the arguments after {@code sandbox}.
     *
     * @param args the arguments
     * @return the command line
     * @throws UsageException when the arguments are wrong
     */
    static CommandLine parse(String[] args) throws UsageException {
        List<String> list = Arrays.asList(args);
        int dashes = list.indexOf("--");
        List<String> options = dashes < 0 ? list : list.subList(0, dashes);
        if (options.contains("--help")
                || options.contains("-h")
                || (!list.isEmpty() && list.get(0).equals("help"))) {
            return new CommandLine(Mode.HELP, "local", null, Map.of(), null, null, null, List.of());
        }
        if (list.isEmpty()) {
            throw new UsageException("missing subcommand: exec or run");
        }
        Mode mode = switch (list.get(0)) {
            case "exec" -> Mode.EXEC;
            case "run" -> Mode.RUN;
            default ->
                throw new UsageException(
                        list.get(0).startsWith("-")
                                ? "unknown option '" + list.get(0) + "'; expected a subcommand, exec or run"
                                : "unknown subcommand '" + list.get(0) + "'; expected exec or run");
        };

        String provider = "local";
        String workdir = null;
        Map<String, String> env = new LinkedHashMap<>();
        Duration timeout = null;
        Duration idleTimeout = null;
        Long maxOutput = null;
        for (int i = 1; i < options.size(); i++) {
            String arg = options.get(i);
            if (!arg.startsWith("--")) {
                throw new UsageException("unexpected argument '" + arg + "'; put the command after --");
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            if (!List.of("--provider", "--workdir", "--env", "--timeout", "--idle-timeout", "--max-output")
                    .contains(name)) {
                throw new UsageException("unknown option '" + name + "'");
            }
            String value;
            if (eq >= 0) {
                value = arg.substring(eq + 1);
            } else if (i + 1 < options.size()) {
                value = options.get(++i);
            } else {
                throw new UsageException("option " + name + " needs a value");
            }
            switch (name) {
                case "--provider" -> {
                    if (!PROVIDERS.contains(value)) {
                        throw new UsageException(
                                "unknown provider '" + value + "' (available: " + String.join(", ", PROVIDERS) + ")");
                    }
                    provider = value;
                }
                case "--workdir" -> workdir = absolute(value);
                case "--env" -> {
                    int sep = value.indexOf('=');
                    if (sep <= 0) {
                        throw new UsageException("invalid --env '" + value + "': expected NAME=VALUE");
                    }
                    env.put(value.substring(0, sep), value.substring(sep + 1));
                }
                case "--timeout" -> timeout = Durations.parse(name, value);
                case "--idle-timeout" -> idleTimeout = Durations.parse(name, value);
                default -> {
                    if (mode != Mode.RUN) {
                        throw new UsageException("--max-output applies to 'sandbox run' only");
                    }
                    maxOutput = bytes(value);
                }
            }
        }
        if (dashes < 0) {
            throw new UsageException("missing -- before the command");
        }
        List<String> command = list.subList(dashes + 1, list.size());
        if (command.isEmpty()) {
            throw new UsageException("missing command after --");
        }
        return new CommandLine(
                mode,
                provider,
                workdir,
                Collections.unmodifiableMap(env),
                timeout,
                idleTimeout,
                maxOutput,
                List.copyOf(command));
    }

    private static String absolute(String dir) throws UsageException {
        if (dir.isEmpty()) {
            throw new UsageException("--workdir needs a directory");
        }
        try {
            return Path.of(dir).toAbsolutePath().normalize().toString();
        } catch (InvalidPathException e) {
            throw new UsageException("invalid --workdir '" + dir + "': " + e.getReason());
        }
    }

    private static long bytes(String text) throws UsageException {
        if (!text.matches("\\d+")) {
            throw new UsageException("invalid --max-output '" + text + "': expected a number of bytes");
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new UsageException("--max-output is too large: '" + text + "'");
        }
    }
}
