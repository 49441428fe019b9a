package dev.sandbox.samples.cli;

import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.implementation.Version;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Help;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code sandbox} command for picocli: its subcommands, the streams they write to, and how the CLI reports what
 * goes wrong. {@code sandbox --help} prints {@link #USAGE}, an overview of every subcommand; {@code sandbox SUBCOMMAND
 * --help} prints that subcommand's own help, made by picocli from its options.
 */
@Command(name = "sandbox", mixinStandardHelpOptions = true, versionProvider = SandboxCommand.SdkVersion.class)
final class SandboxCommand implements Callable<Integer> {
    /**
     * The subcommands, in the order help and completion list them. Picocli builds a subcommand's model by reflection
     * on its class (and loads the classes its fields name), which took most of the CLI's start; {@link
     * #commandLine(String[])} builds only the one a command line runs.
     */
    private static final Map<String, Class<?>> SUBCOMMANDS = subcommandClasses();

    private static Map<String, Class<?>> subcommandClasses() {
        Map<String, Class<?>> classes = new LinkedHashMap<>();
        classes.put("exec", ExecCommand.class);
        classes.put("run", RunCommand.class);
        classes.put("create", CreateCommand.class);
        classes.put("ls", ListSessionsCommand.class);
        classes.put("destroy", DestroyCommand.class);
        classes.put("snapshot", SnapshotCommand.class);
        classes.put("logs", LogsCommand.class);
        classes.put("cp", CopyCommand.class);
        classes.put("ls-files", ListFilesCommand.class);
        classes.put("port-forward", PortForwardCommand.class);
        classes.put("top", TopCommand.class);
        classes.put("shell", ShellCommand.class);
        classes.put("serve", ServeCommand.class);
        classes.put("mcp", McpCommand.class);
        classes.put("generate-completion", AutoComplete.GenerateCompletion.class);
        return Collections.unmodifiableMap(classes);
    }

    static final String USAGE = """
            usage: sandbox exec [OPTIONS] [--session SESSION] [--background [--label K=V]...]
                                -- CMD [ARG...]
                   sandbox run [OPTIONS] [--max-output BYTES] [--session SESSION] -- CMD [ARG...]
                   sandbox create [PROVIDER] [--label K=V]... [--lifetime D] [--idle-timeout D]
                                  [--from-snapshot REF] [--name NAME]
                   sandbox ls [PROVIDER] [--label K=V]...
                   sandbox destroy [PROVIDER] SESSION...
                   sandbox snapshot [PROVIDER] SESSION
                   sandbox logs [PROVIDER] [--from OFFSET] [--follow] SESSION PROCESS
                   sandbox cp [PROVIDER] SRC DST
                   sandbox ls-files [PROVIDER] SESSION:PATH
                   sandbox port-forward [PROVIDER] [--local-port N] [--address A] SESSION PORT
                   sandbox top [PROVIDER] [--interval D] [--count N] SESSION
                   sandbox shell [PROVIDER] [--session SESSION] [-- CMD [ARG...]]
                   sandbox serve [--provider local|docker|kubernetes [DOCKER|KUBERNETES]]
                                 [--host HOST] [--port PORT] --token-file FILE
                   sandbox mcp [PROVIDER] [--max-sessions N] [--lifetime D] [--timeout D]
                               [--max-output SIZE]
                   sandbox generate-completion
                   sandbox help [SUBCOMMAND]
                   sandbox --help | --version

            Commands in a new sandbox session, destroyed when they end:
              exec      streams CMD's stdout to stdout and its stderr to stderr, line by line
                        as they are written, and exits with CMD's exit code
              run       waits for CMD and prints one JSON object to stdout: exitCode, stdout,
                        stderr, stdoutTruncated, stderrTruncated, durationMs (and stdoutBytes,
                        stderrBytes, termination); exits with CMD's exit code

            Commands for sessions that outlive the sandbox command (docker, kubernetes and remote;
            local sessions end with the command that made them, so with the local provider
            these fail with exit code 2):
              create    makes a session and prints its id; with --from-snapshot, from a
                        snapshot (docker) [lifetime 5m]
              exec --session SESSION, run --session SESSION
                        run CMD in an existing session, which stays; --workdir and --env
                        are CMD's own there; SIGINT or SIGTERM kills CMD
              ls        prints "SESSION PROVIDER CREATED LABELS" for each session that has all
                        the given labels
              destroy   removes the sessions; exits 1 if one of them could not be removed
              snapshot  saves session SESSION as an image and prints its reference (docker)
              exec --background
                        starts CMD in a new session that stays (labelled with --label K=V),
                        or with --session SESSION in that session, prints "SESSION PROCESS"
                        (the ids sandbox logs takes) and exits 0
              logs      prints what background process PROCESS of session SESSION wrote, from
                        byte offset OFFSET (OUT,ERR or stdout=OUT,stderr=ERR: one per stream)
                        [0], and exits 0; with
                        --follow, waits for more until the process ends and exits with its
                        exit code
              cp        copies a file between this machine and a session; one of SRC and DST
                        is SESSION:PATH (a relative PATH is in the session's workdir), the
                        other a local path (write ./a:b for a local name with a colon); a DST
                        that is a directory gets SRC's file name
              ls-files  lists directory PATH of session SESSION (SESSION: for its workdir),
                        or describes file PATH: type, mode, size, modification time, name
              port-forward
                        forwards port N [0: a free one] of this machine's address A
                        [127.0.0.1] to TCP port PORT on the loopback of session SESSION
                        (the sandbox needs no network), prints "Forwarding HOST:PORT ->
                        sandbox port PORT of SESSION" and runs until SIGINT or SIGTERM (then
                        closes it and exits 0) or the session's end (exits 1); an A other
                        than loopback gets a warning: whoever reaches it reaches the server
              top       prints the resource use of session SESSION, a line per sample every D
                        [2s]: CPU seconds, memory and peak, processes, disk and network in
                        MiB (- where unknown); runs until Ctrl-C or N samples (exits 0) or the
                        session's end (exits 1)

            Interactive:
              shell     runs CMD [/bin/sh] on a terminal in a new session (or, with --session,
                        in an existing one), with this terminal in raw mode and its size
                        passed on as it changes; exits with CMD's exit code

            Server:
              serve     serves local, docker or kubernetes sessions over HTTP (the remote provider's protocol) on
                        HOST [127.0.0.1] and PORT [7070; 0 for any free port], to clients
                        that send the token in FILE; prints "serving on URL" and runs until
                        SIGINT or SIGTERM, then stops gracefully (its sessions are destroyed);
                        also serves MCP (streamable HTTP) under /mcp with the same token
              mcp       an MCP server on stdin/stdout for an MCP client that launches it: tools
                        to create sessions, run commands and code in them (output streamed as
                        progress) and read, write and list their files; runs until stdin ends
                        or SIGINT/SIGTERM, then destroys its sessions

            Help and shell completion:
              help      prints this help, or with SUBCOMMAND that subcommand's own (as does
                        SUBCOMMAND --help)
              generate-completion
                        prints a bash and zsh completion script for sandbox; load it with
                        source <(sandbox generate-completion)

            PROVIDER and OPTIONS:
              --provider NAME     where to run: local (host processes, no isolation), docker
                                  (containers on the Docker daemon of DOCKER_HOST), kubernetes
                                  (pods in the cluster of KUBECONFIG) or remote (a sandbox
                                  serve) [local; sandbox mcp: docker]
              --url URL           remote only: the server, such as http://127.0.0.1:7070
              --token-file FILE   remote only: the file holding the server's token
            DOCKER (docker; those marked * also kubernetes):
              --image IMAGE     * the sessions' image [python:3.12-slim]
              --pull POLICY     * always, if-not-present or never [if-not-present]
                                  (also --pull-policy)
              --runtime NAME      runc, or runsc for gVisor [runc]
              --network NAME      none or bridge [none]
              --cpus N          * CPU limit, such as 0.5
              --memory BYTES    * memory limit: a number with an optional k, m or g suffix
              --pids-limit N      the most processes at once
            KUBERNETES (kubernetes only):
              --kubeconfig FILE   the kubeconfig [KUBECONFIG, else ~/.kube/config]
              --context NAME      the kubeconfig's context [its current one]
              --namespace NAME    the namespace of the session pods [the context's, else default]
              --agent-image IMAGE the image the agent is copied from, which the nodes can pull
                                  [dev.sandbox/sandbox-agent:VERSION]
            OPTIONS also:
              --workdir DIR       run in DIR (must exist; kept) instead of a fresh temporary
                                  directory (deleted afterwards); with --session, CMD's
                                  directory in the session (absolute)
              --env NAME=VALUE    set an environment variable (with --session, CMD's own);
                                  may be repeated
              --timeout D         kill CMD after D; exit code 124 and "timed out" on stderr
              --idle-timeout D    kill CMD after D without output; exit code 124
              --lifetime D        end the session after D, killing CMD (exit code 124)
                                  [as long as CMD runs; 5m with --background]
              --max-output BYTES  run only: keep at most BYTES of each stream [1048576]
              --background        exec only: see above
              --session SESSION   exec and run: use this existing session
              --label K=V         create, exec --background: label the new session; ls: list
                                  only sessions with it
              --from-snapshot REF create only: start from this snapshot
              --from OFFSET       logs only: where to start, OFFSET, OUT,ERR or
                                  stdout=OUT,stderr=ERR bytes [0] (also --from-stdout OUT,
                                  --from-stderr ERR)
              --follow            logs only: wait for more output until the process ends
              --local-port N      port-forward only: the port on this machine [0: a free one]
              --address A         port-forward only: the IP address on this machine to listen
                                  on [127.0.0.1]
              -h, --help          print this help (after a subcommand: that subcommand's)
              -V, --version       print the SDK's version

            D is a whole number with a unit: 500ms, 10s, 2m, 1h.
            CMD's stdin is empty (except in shell). Output is passed on as lines: a last line
            without a newline gets one.

            exit codes: CMD's own; 124 timeout; 2 usage error, or a command the provider cannot
            do; 127 CMD could not be started; 1 other sandbox error
            """;

    /** Where the subcommands write what they and their commands print. */
    final PrintStream out;

    /** Where the subcommands write their commands' stderr and the CLI's own messages. */
    final PrintStream err;

    @Spec
    CommandSpec spec;

    SandboxCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /**
     * The command line of this command with the CLI's conventions: arguments are taken as they are ({@code @FILE} is
     * not expanded, a repeated option's last value wins), help is plain text, a usage error exits 2 and an error of
     * the sandbox is mapped to its exit code.
     *
     * @return the command line, ready to execute
     */
    CommandLine commandLine() {
        return commandLine(SUBCOMMANDS.keySet());
    }

    /**
     * The command line for {@code args}: the same as {@link #commandLine()}, but only the subcommand that {@code args}
     * runs (or asks help for) is built in full; the others are there by name only (for "unknown subcommand" and its
     * suggestions), which picocli never parses nor shows, as the top-level help is {@link #USAGE}.
     *
     * @param args the command line
     * @return the command line, ready to execute {@code args}
     */
    CommandLine commandLine(String[] args) {
        return commandLine(used(args));
    }

    /**
     * The subcommands {@code args} can reach: the first argument that is not an option (the top level's options take
     * no value), the one after {@code help}, and all for {@code generate-completion}.
     */
    private static Set<String> used(String[] args) {
        Set<String> used = new HashSet<>();
        boolean help = false;
        for (String arg : args) {
            if (arg.equals("--")) {
                break;
            }
            if (arg.startsWith("-")) {
                continue;
            }
            if (arg.equals("generate-completion")) {
                return SUBCOMMANDS.keySet();
            }
            used.add(arg);
            if (help || !arg.equals("help")) {
                break;
            }
            help = true;
        }
        return used;
    }

    private CommandLine commandLine(Set<String> built) {
        CommandLine commandLine = new CommandLine(this);
        // settings reach the subcommands there are when they are set: add them first
        SUBCOMMANDS.forEach((name, type) -> {
            if (built.contains(name)) {
                commandLine.addSubcommand(name, type);
            } else {
                // generate-completion is a help command, as picocli's own: messages leave it out of the list
                commandLine.addSubcommand(name, CommandSpec.create().helpCommand(name.equals("generate-completion")));
            }
        });
        commandLine.addSubcommand(
                "help",
                built.contains("help")
                        ? HelpCommand.class
                        : CommandSpec.create().helpCommand(true));
        commandLine
                .setExpandAtFiles(false)
                .setOverwrittenOptionsAllowed(true)
                .setColorScheme(Help.defaultColorScheme(Help.Ansi.OFF))
                .setOut(writer(out))
                .setErr(writer(err))
                .setParameterExceptionHandler(this::usageError)
                .setExecutionExceptionHandler(this::failed)
                .registerConverter(Duration.class, new Durations());
        Set<String> configured = new HashSet<>(built);
        configured.add("help");
        for (String name : configured) {
            CommandLine subcommand = commandLine.getSubcommands().get(name);
            if (subcommand != null) { // null: an unknown subcommand, which picocli reports
                subcommand
                        .getCommandSpec()
                        .usageMessage()
                        .synopsisHeading("usage: ")
                        .sortOptions(false);
            }
        }
        commandLine
                .getCommandSpec()
                .usageMessage()
                .sectionKeys(List.of("overview"))
                .sectionMap(Map.of("overview", help -> USAGE));
        return commandLine;
    }

    private static PrintWriter writer(PrintStream stream) {
        return new PrintWriter(new OutputStreamWriter(stream, stream.charset()), true);
    }

    /** {@code sandbox} alone. */
    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "missing subcommand: " + subcommands());
    }

    /** The subcommands that do something, for messages: "exec, run, ... or serve". */
    private String subcommands() {
        List<String> names = spec.subcommands().entrySet().stream()
                .filter(e -> !e.getValue().getCommandSpec().helpCommand())
                .map(Map.Entry::getKey)
                .toList();
        return String.join(", ", names.subList(0, names.size() - 1)) + " or " + names.getLast();
    }

    /**
     * Prints what is wrong with the command line in a few lines, and returns 2: the error, what the user may have
     * meant (one wording for picocli's suggestions and the CLI's own), the subcommand's synopsis, and where its help
     * is. The whole help is for {@code --help}: printed after every mistake, it pushed the error off the screen.
     */
    private int usageError(ParameterException e, String[] args) {
        CommandLine command = e.getCommandLine();
        String message = e.getMessage();
        boolean topLevel = command.getCommandSpec() == spec;
        List<String> suggestions = List.of();
        if (e instanceof UnmatchedArgumentException unmatched) {
            suggestions = unmatched.getSuggestions();
            if (topLevel && !unmatched.isUnknownOption()) {
                message = "unknown subcommand '" + unmatched.getUnmatched().getFirst() + "'; expected " + subcommands();
                suggestions = suggestions.stream().map(s -> "sandbox " + s).toList();
            }
        }
        PrintWriter writer = command.getErr();
        writer.println("sandbox: " + message);
        String hint = Suggestions.didYouMean(suggestions);
        if (hint != null) {
            writer.println(hint);
        }
        String[] synopsis = command.getCommandSpec().usageMessage().customSynopsis();
        if (!topLevel && synopsis.length > 0) {
            // a synopsis's continuation lines are indented for the "usage: " of picocli's help
            writer.println("usage: " + String.join("\n", synopsis));
        }
        String name = command.getCommandSpec().qualifiedName();
        writer.println("see 'sandbox help" + name.substring("sandbox".length()) + "'");
        writer.flush();
        return SandboxCli.EXIT_USAGE;
    }

    /** Prints a sandbox error and returns its exit code; anything else is a bug, and picocli prints its trace. */
    private int failed(Exception e, CommandLine command, ParseResult parsed) throws Exception {
        int code = switch (e) {
            case UsageException usage -> SandboxCli.EXIT_USAGE;
            case ProcessLaunchException launch -> SandboxCli.EXIT_LAUNCH_FAILED;
            case SandboxTimeoutException timeout -> SandboxCli.EXIT_TIMEOUT;
            case SandboxException other -> SandboxCli.EXIT_ERROR;
            default -> throw e;
        };
        return SandboxCli.fail(err, e.getMessage(), code);
    }

    /** {@code sandbox --version}: the SDK's version, as its build recorded it. */
    static final class SdkVersion implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"sandbox " + Version.get()};
        }
    }
}
