package dev.sandbox.samples.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** A parsed {@code sandbox} command line: one record per subcommand. */
sealed interface CommandLine {

    /** Print the usage. */
    record Help() implements CommandLine {}

    /**
     * Where sessions come from: {@code --provider NAME}, and for the remote provider {@code --url} and {@code
     * --token-file}.
     *
     * @param name the provider's name, one of {@link #PROVIDERS}
     * @param url the server's base URL (remote only), or {@code null}
     * @param tokenFile the file holding the bearer token (remote only), or {@code null}
     */
    record Provider(String name, String url, Path tokenFile, Docker docker) {
        /** The local provider. */
        static final Provider LOCAL = new Provider("local", null, null, null);
    }

    /**
     * The Docker provider's settings: {@code --image}, {@code --pull}, {@code --runtime}, {@code --network}, {@code
     * --cpus}, {@code --memory}, {@code --pids-limit}. Every field but the image may be {@code null} for Docker's or
     * the SDK's default.
     *
     * @param image the image, such as {@code python:3.12-slim}
     * @param pull always, if-not-present or never
     * @param runtime runc or runsc
     * @param network none or bridge
     * @param cpus the CPU limit, in CPUs
     * @param memory the memory limit, in bytes
     * @param pidsLimit the most processes at once
     */
    record Docker(String image, String pull, String runtime, String network, Double cpus, Long memory, Long pidsLimit) {
        /** The image sessions use when {@code --image} is not given. */
        static final String DEFAULT_IMAGE = "sandbox-test:busybox";
    }

    /**
     * {@code sandbox create}: a session that outlives the command; prints its id.
     *
     * @param provider where to make it
     * @param labels its labels
     * @param lifetime its lifetime, or {@code null} for the SDK's default
     * @param idleTimeout its idle timeout, or {@code null} for none
     * @param fromSnapshot a snapshot to start from, or {@code null}
     */
    record Create(
            Provider provider, Map<String, String> labels, Duration lifetime, Duration idleTimeout, String fromSnapshot)
            implements CommandLine {}

    /**
     * {@code sandbox ls}: the sessions whose labels include the given ones.
     *
     * @param provider where to look
     * @param labels the labels every listed session has
     */
    record ListSessions(Provider provider, Map<String, String> labels) implements CommandLine {}

    /**
     * {@code sandbox destroy}: removes sessions.
     *
     * @param provider where they are
     * @param sessions their ids
     */
    record Destroy(Provider provider, List<String> sessions) implements CommandLine {}

    /**
     * {@code sandbox snapshot}: saves a session as a snapshot; prints its reference.
     *
     * @param provider where the session is
     * @param session its id
     */
    record Snapshot(Provider provider, String session) implements CommandLine {}

    /**
     * {@code sandbox serve}: serves the local provider's sessions over HTTP until SIGINT or SIGTERM.
     *
     * @param host the address to bind
     * @param port the port, 0 for any free one
     * @param tokenFile the file holding the bearer token clients must send
     * @param provider whose sessions to serve: local or docker
     */
    record Serve(String host, int port, Path tokenFile, Provider provider) implements CommandLine {}

    /**
     * {@code sandbox shell}: an interactive terminal in a session.
     *
     * @param provider where the session is
     * @param session an existing session's id, or {@code null} for a new session that ends with the shell
     * @param command the program and its arguments
     */
    record Shell(Provider provider, String session, List<String> command) implements CommandLine {}

    /**
     * {@code sandbox exec} and {@code sandbox run}: a command in a new session.
     *
     * @param mode stream the output ({@code exec}) or collect it as JSON ({@code run})
     * @param provider the provider's name
     * @param workdir the session's workdir as an absolute path, or {@code null} for a fresh one
     * @param env environment variables for the session, in the order given
     * @param timeout the command's timeout, or {@code null}
     * @param idleTimeout the command's idle timeout, or {@code null}
     * @param lifetime the session's lifetime, or {@code null} for the default
     * @param maxOutput the per-stream cap of {@code run}, or {@code null} for the SDK's default
     * @param background start the command in a session that outlives the CLI and print its ids ({@code exec} only)
     * @param session an existing session to run in (left running), or {@code null} for a new one
     * @param command the program and its arguments
     */
    record Exec(
            Mode mode,
            Provider provider,
            String workdir,
            Map<String, String> env,
            Duration timeout,
            Duration idleTimeout,
            Duration lifetime,
            Long maxOutput,
            boolean background,
            String session,
            List<String> command)
            implements CommandLine {}

    /**
     * {@code sandbox logs}: the output of a background process of an existing session.
     *
     * @param provider the provider's name
     * @param session the session's id
     * @param process the process's id
     * @param stdoutFrom the stdout byte offset to start from
     * @param stderrFrom the stderr byte offset to start from
     * @param follow whether to wait for more output until the process exits
     */
    record Logs(Provider provider, String session, String process, long stdoutFrom, long stderrFrom, boolean follow)
            implements CommandLine {}

    /**
     * {@code sandbox cp}: a file copied between this machine and a session.
     *
     * @param provider the provider's name
     * @param source where to copy from
     * @param target where to copy to; exactly one of the two is in a session
     */
    record Copy(Provider provider, Location source, Location target) implements CommandLine {
        /** The session the copy involves. */
        String session() {
            return source.inSession() ? source.session() : target.session();
        }
    }

    /**
     * {@code sandbox ls-files}: the entries of a directory of a session (or one file's details).
     *
     * @param provider the provider's name
     * @param location the session and the path in it
     */
    record ListFiles(Provider provider, Location location) implements CommandLine {}

    /**
     * A path on this machine or, written {@code SESSION:PATH}, in a session.
     *
     * @param session the session's id, or {@code null} for a local path
     * @param path the path; in a session, relative paths resolve against its workdir
     */
    record Location(String session, String path) {
        boolean inSession() {
            return session != null;
        }

        @Override
        public String toString() {
            return inSession() ? session + ":" + path : path;
        }
    }

    /** Whether {@code exec} streams the output or {@code run} collects it. */
    enum Mode {
        /** Stream the command's output as it happens. */
        EXEC,
        /** Collect the command's output and print it as JSON. */
        RUN
    }

    /** The providers the CLI knows. */
    List<String> PROVIDERS = List.of("local", "docker", "remote");

    /** The Docker provider's options. */
    Set<String> DOCKER_OPTIONS =
            Set.of("--image", "--pull", "--runtime", "--network", "--cpus", "--memory", "--pids-limit");

    /** The options that choose the provider, accepted by every subcommand that uses sessions. */
    Set<String> PROVIDER_OPTIONS = Set.of(
            "--provider",
            "--url",
            "--token-file",
            "--image",
            "--pull",
            "--runtime",
            "--network",
            "--cpus",
            "--memory",
            "--pids-limit");

    String USAGE = """
            usage: sandbox exec [OPTIONS] [--background | --session SESSION] -- CMD [ARG...]
                   sandbox run [OPTIONS] [--max-output BYTES] [--session SESSION] -- CMD [ARG...]
                   sandbox create [PROVIDER] [--label K=V]... [--lifetime D] [--idle-timeout D]
                                  [--from-snapshot REF]
                   sandbox ls [PROVIDER] [--label K=V]...
                   sandbox destroy [PROVIDER] SESSION...
                   sandbox snapshot [PROVIDER] SESSION
                   sandbox logs [PROVIDER] [--from OFFSET] [--follow] SESSION PROCESS
                   sandbox cp [PROVIDER] SRC DST
                   sandbox ls-files [PROVIDER] SESSION:PATH
                   sandbox shell [PROVIDER] [--session SESSION] [-- CMD [ARG...]]
                   sandbox serve [--provider local|docker [DOCKER]] [--host HOST] [--port PORT]
                                 --token-file FILE
                   sandbox --help

            Commands in a new sandbox session, destroyed when they end:
              exec      streams CMD's stdout to stdout and its stderr to stderr, line by line
                        as they are written, and exits with CMD's exit code
              run       waits for CMD and prints one JSON object to stdout: exitCode, stdout,
                        stderr, stdoutTruncated, stderrTruncated, durationMs (and stdoutBytes,
                        stderrBytes, termination); exits with CMD's exit code

            Commands for sessions that outlive the sandbox command (docker and remote providers;
            local sessions end with the command that made them, so with the local provider
            these fail with exit code 2):
              create    makes a session and prints its id; with --from-snapshot, from a
                        snapshot (docker) [lifetime 5m]
              exec --session SESSION, run --session SESSION
                        run CMD in an existing session, which stays
              ls        prints "SESSION PROVIDER CREATED LABELS" for each session that has all
                        the given labels
              destroy   removes the sessions; exits 1 if one of them could not be removed
              snapshot  saves session SESSION as an image and prints its reference (docker)
              exec --background
                        starts CMD in a new session that stays, prints "SESSION PROCESS" (the
                        ids sandbox logs takes) and exits 0
              logs      prints what background process PROCESS of session SESSION wrote, from
                        byte offset OFFSET (OUT,ERR: one per stream) [0], and exits 0; with
                        --follow, waits for more until the process ends and exits with its
                        exit code
              cp        copies a file between this machine and a session; one of SRC and DST
                        is SESSION:PATH (a relative PATH is in the session's workdir), the
                        other a local path (write ./a:b for a local name with a colon); a DST
                        that is a directory gets SRC's file name
              ls-files  lists directory PATH of session SESSION (SESSION: for its workdir),
                        or describes file PATH: type, mode, size, modification time, name

            Interactive:
              shell     runs CMD [/bin/sh] on a terminal in a new session (or, with --session,
                        in an existing one), with this terminal in raw mode and its size
                        passed on as it changes; exits with CMD's exit code

            Server:
              serve     serves local (or docker) sessions over HTTP (the remote provider's protocol) on
                        HOST [127.0.0.1] and PORT [7070; 0 for any free port], to clients
                        that send the token in FILE; prints "serving on URL" and runs until
                        SIGINT or SIGTERM, then stops gracefully (its sessions are destroyed)

            PROVIDER and OPTIONS:
              --provider NAME     where to run: local (host processes, no isolation), docker
                                  (containers on the Docker daemon of DOCKER_HOST) or remote
                                  (a sandbox serve) [local]
              --url URL           remote only: the server, such as http://127.0.0.1:7070
              --token-file FILE   remote only: the file holding the server's token
            DOCKER (docker only):
              --image IMAGE       the sessions' image [sandbox-test:busybox]
              --pull POLICY       always, if-not-present or never [if-not-present]
              --runtime NAME      runc, or runsc for gVisor [runc]
              --network NAME      none or bridge [none]
              --cpus N            CPU limit, such as 0.5
              --memory BYTES      memory limit: a number with an optional k, m or g suffix
              --pids-limit N      the most processes at once
            OPTIONS also:
              --workdir DIR       run in DIR (must exist; kept) instead of a fresh temporary
                                  directory (deleted afterwards)
              --env NAME=VALUE    set an environment variable; may be repeated
              --timeout D         kill CMD after D; exit code 124
              --idle-timeout D    kill CMD after D without output; exit code 124
              --lifetime D        end the session after D, killing CMD (exit code 124)
                                  [as long as CMD runs; 5m with --background]
              --max-output BYTES  run only: keep at most BYTES of each stream [1048576]
              --background        exec only: see above
              --session SESSION   exec and run: use this existing session
              --label K=V         create: add a label; ls: list only sessions with it
              --from-snapshot REF create only: start from this snapshot
              --from OFFSET       logs only: where to start, OFFSET or OUT,ERR bytes [0]
              --follow            logs only: wait for more output until the process ends
              -h, --help          print this help

            D is a whole number with a unit: 500ms, 10s, 2m, 1h.
            CMD's stdin is empty (except in shell). Output is passed on as lines: a last line
            without a newline gets one.

            exit codes: CMD's own; 124 timeout; 2 usage error, or a command the provider cannot
            do; 127 CMD could not be started; 1 other sandbox error
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
        List<String> beforeDashes = dashes < 0 ? list : list.subList(0, dashes);
        if (beforeDashes.contains("--help")
                || beforeDashes.contains("-h")
                || (!list.isEmpty() && list.get(0).equals("help"))) {
            return new Help();
        }
        if (list.isEmpty()) {
            throw new UsageException(
                    "missing subcommand: exec, run, create, ls, destroy, snapshot, logs, cp, ls-files, shell or serve");
        }
        String subcommand = list.get(0);
        List<String> rest = list.subList(1, list.size());
        return switch (subcommand) {
            case "exec" -> parseExec(Mode.EXEC, rest);
            case "run" -> parseExec(Mode.RUN, rest);
            case "logs" -> parseLogs(rest);
            case "cp" -> parseCopy(rest);
            case "ls-files" -> parseListFiles(rest);
            case "serve" -> parseServe(rest);
            case "create" -> parseCreate(rest);
            case "ls" -> parseListSessions(rest);
            case "destroy" -> parseDestroy(rest);
            case "snapshot" -> parseSnapshot(rest);
            case "shell" -> parseShell(rest);
            default ->
                throw new UsageException(
                        subcommand.startsWith("-")
                                ? "unknown option '" + subcommand + "'; expected a subcommand first"
                                        + " (exec, run, create, ls, destroy, snapshot, logs, cp, ls-files, shell or serve)"
                                : "unknown subcommand '" + subcommand
                                        + "'; expected exec, run, create, ls, destroy, snapshot, logs, cp, ls-files, shell or serve");
        };
    }

    private static Exec parseExec(Mode mode, List<String> args) throws UsageException {
        int dashes = args.indexOf("--");
        Options o = Options.parse(
                args,
                dashes < 0 ? args.size() : dashes,
                with(Set.of(
                        "--workdir",
                        "--env",
                        "--timeout",
                        "--idle-timeout",
                        "--lifetime",
                        "--max-output",
                        "--session")),
                Set.of("--background"),
                false);
        Provider provider = provider(o);
        String workdir = null;
        Map<String, String> env = new LinkedHashMap<>();
        Duration timeout = null;
        Duration idleTimeout = null;
        Duration lifetime = null;
        Long maxOutput = null;
        boolean background = false;
        String session = null;
        for (Option option : o.given()) {
            String value = option.value();
            switch (option.name()) {
                case "--workdir" -> workdir = absolute(value);
                case "--env" -> {
                    int sep = value.indexOf('=');
                    if (sep <= 0) {
                        throw new UsageException("invalid --env '" + value + "': expected NAME=VALUE");
                    }
                    env.put(value.substring(0, sep), value.substring(sep + 1));
                }
                case "--timeout" -> timeout = Durations.parse(option.name(), value);
                case "--idle-timeout" -> idleTimeout = Durations.parse(option.name(), value);
                case "--lifetime" -> lifetime = Durations.parse(option.name(), value);
                case "--max-output" -> {
                    if (mode != Mode.RUN) {
                        throw new UsageException("--max-output applies to 'sandbox run' only");
                    }
                    maxOutput = bytes("--max-output", value);
                }
                case "--background" -> {
                    if (mode != Mode.EXEC) {
                        throw new UsageException("--background applies to 'sandbox exec' only");
                    }
                    background = true;
                }
                case "--session" -> session = id("--session", option.value());
                default -> {
                    // --provider, read above
                }
            }
        }
        if (!o.positional().isEmpty()) {
            throw new UsageException("unexpected argument '" + o.positional().get(0) + "'; put the command after --");
        }
        if (dashes < 0) {
            throw new UsageException("missing -- before the command");
        }
        List<String> command = args.subList(dashes + 1, args.size());
        if (command.isEmpty()) {
            throw new UsageException("missing command after --");
        }
        if (session != null && background) {
            throw new UsageException("--session and --background do not go together: --background makes a session");
        }
        if (session != null && (workdir != null || !env.isEmpty() || lifetime != null)) {
            throw new UsageException(
                    "--workdir, --env and --lifetime set up a new session; with --session the session exists");
        }
        return new Exec(
                mode,
                provider,
                workdir,
                Collections.unmodifiableMap(env),
                timeout,
                idleTimeout,
                lifetime,
                maxOutput,
                background,
                session,
                List.copyOf(command));
    }

    private static Create parseCreate(List<String> args) throws UsageException {
        Options o = Options.parse(
                args,
                args.size(),
                with(Set.of("--label", "--lifetime", "--idle-timeout", "--from-snapshot")),
                Set.of(),
                true);
        if (!o.positional().isEmpty()) {
            throw new UsageException(
                    "unexpected argument '" + o.positional().get(0) + "'; sandbox create takes options");
        }
        Duration lifetime = null;
        Duration idleTimeout = null;
        String snapshot = null;
        for (Option option : o.given()) {
            switch (option.name()) {
                case "--lifetime" -> lifetime = Durations.parse(option.name(), option.value());
                case "--idle-timeout" -> idleTimeout = Durations.parse(option.name(), option.value());
                case "--from-snapshot" -> snapshot = id("--from-snapshot", option.value());
                default -> {
                    // --label, --provider
                }
            }
        }
        return new Create(provider(o), labels(o), lifetime, idleTimeout, snapshot);
    }

    private static ListSessions parseListSessions(List<String> args) throws UsageException {
        Options o = Options.parse(args, args.size(), with(Set.of("--label")), Set.of(), true);
        if (!o.positional().isEmpty()) {
            throw new UsageException("unexpected argument '" + o.positional().get(0) + "'; sandbox ls takes options");
        }
        return new ListSessions(provider(o), labels(o));
    }

    private static Destroy parseDestroy(List<String> args) throws UsageException {
        Options o = Options.parse(args, args.size(), PROVIDER_OPTIONS, Set.of(), true);
        if (o.positional().isEmpty()) {
            throw new UsageException("sandbox destroy needs at least one SESSION id");
        }
        List<String> ids = new ArrayList<>();
        for (String id : o.positional()) {
            ids.add(id("SESSION", id));
        }
        return new Destroy(provider(o), List.copyOf(ids));
    }

    private static Snapshot parseSnapshot(List<String> args) throws UsageException {
        Options o = Options.parse(args, args.size(), PROVIDER_OPTIONS, Set.of(), true);
        if (o.positional().size() != 1) {
            throw new UsageException(
                    o.positional().isEmpty()
                            ? "sandbox snapshot needs a SESSION id"
                            : "unexpected argument '" + o.positional().get(1)
                                    + "'; sandbox snapshot takes one SESSION");
        }
        return new Snapshot(provider(o), id("SESSION", o.positional().get(0)));
    }

    /** The {@code --label K=V} options, in the order given. */
    private static Map<String, String> labels(Options o) throws UsageException {
        Map<String, String> labels = new LinkedHashMap<>();
        for (Option option : o.given()) {
            if (option.name().equals("--label")) {
                String value = option.value();
                int sep = value.indexOf('=');
                if (sep <= 0) {
                    throw new UsageException("invalid --label '" + value + "': expected KEY=VALUE");
                }
                labels.put(value.substring(0, sep), value.substring(sep + 1));
            }
        }
        return Collections.unmodifiableMap(labels);
    }

    private static Logs parseLogs(List<String> args) throws UsageException {
        Options o = Options.parse(args, args.size(), with(Set.of("--from")), Set.of("--follow"), true);
        long stdoutFrom = 0;
        long stderrFrom = 0;
        boolean follow = false;
        for (Option option : o.given()) {
            switch (option.name()) {
                case "--from" -> {
                    String value = option.value();
                    int comma = value.indexOf(',');
                    if (comma < 0) {
                        stdoutFrom = bytes("--from", value);
                        stderrFrom = stdoutFrom;
                    } else {
                        stdoutFrom = bytes("--from", value.substring(0, comma));
                        stderrFrom = bytes("--from", value.substring(comma + 1));
                    }
                }
                case "--follow" -> follow = true;
                default -> {
                    // --provider
                }
            }
        }
        List<String> ids = o.positional();
        if (ids.size() != 2) {
            throw new UsageException(
                    ids.size() < 2
                            ? "sandbox logs needs a SESSION and a PROCESS id"
                            : "unexpected argument '" + ids.get(2) + "'; sandbox logs takes SESSION PROCESS");
        }
        return new Logs(
                provider(o), id("SESSION", ids.get(0)), id("PROCESS", ids.get(1)), stdoutFrom, stderrFrom, follow);
    }

    private static Copy parseCopy(List<String> args) throws UsageException {
        Options o = Options.parse(args, args.size(), PROVIDER_OPTIONS, Set.of(), true);
        List<String> paths = o.positional();
        if (paths.size() != 2) {
            throw new UsageException(
                    paths.size() < 2
                            ? "sandbox cp needs a SRC and a DST"
                            : "unexpected argument '" + paths.get(2) + "'; sandbox cp takes SRC DST");
        }
        Location source = location(paths.get(0), false);
        Location target = location(paths.get(1), false);
        if (source.inSession() == target.inSession()) {
            throw new UsageException(
                    source.inSession()
                            ? "sandbox cp copies between this machine and a session: one of SRC and DST must be"
                                    + " a local path"
                            : "sandbox cp copies between this machine and a session: one of SRC and DST must be"
                                    + " SESSION:PATH");
        }
        return new Copy(provider(o), source, target);
    }

    private static ListFiles parseListFiles(List<String> args) throws UsageException {
        Options o = Options.parse(args, args.size(), PROVIDER_OPTIONS, Set.of(), true);
        List<String> targets = o.positional();
        if (targets.size() != 1) {
            throw new UsageException(
                    targets.isEmpty()
                            ? "sandbox ls-files needs SESSION:PATH"
                            : "unexpected argument '" + targets.get(1) + "'; sandbox ls-files takes one SESSION:PATH");
        }
        Location location = location(targets.get(0), true);
        if (!location.inSession()) {
            throw new UsageException("sandbox ls-files needs SESSION:PATH, got '" + targets.get(0) + "'");
        }
        return new ListFiles(provider(o), location);
    }

    /**
     * {@code SESSION:PATH} when there is a colon and what comes before the first one is a non-empty name without a
     * slash (as scp reads it); otherwise a local path.
     */
    private static Location location(String text, boolean emptyPathIsWorkdir) throws UsageException {
        if (text.isEmpty()) {
            throw new UsageException("empty path");
        }
        int colon = text.indexOf(':');
        if (colon <= 0 || text.substring(0, colon).contains("/")) {
            return new Location(null, text);
        }
        String path = text.substring(colon + 1);
        if (path.isEmpty()) {
            if (!emptyPathIsWorkdir) {
                throw new UsageException("missing path after '" + text + "'");
            }
            path = ".";
        }
        return new Location(text.substring(0, colon), path);
    }

    private static String id(String what, String text) throws UsageException {
        if (text.isBlank()) {
            throw new UsageException(what + " must not be empty");
        }
        return text;
    }

    private static Set<String> with(Set<String> options) {
        Set<String> all = new java.util.HashSet<>(options);
        all.addAll(PROVIDER_OPTIONS);
        return all;
    }

    private static Provider provider(Options o) throws UsageException {
        String provider = "local";
        String url = null;
        Path tokenFile = null;
        String image = null;
        String pull = null;
        String runtime = null;
        String network = null;
        Double cpus = null;
        Long memory = null;
        Long pids = null;
        String dockerOption = null;
        for (Option option : o.given()) {
            if (DOCKER_OPTIONS.contains(option.name())) {
                dockerOption = option.name();
            }
            switch (option.name()) {
                case "--image" -> image = id("--image", option.value());
                case "--pull" -> pull = oneOf("--pull", option.value(), "always", "if-not-present", "never");
                case "--runtime" -> runtime = oneOf("--runtime", option.value(), "runc", "runsc");
                case "--network" -> network = oneOf("--network", option.value(), "none", "bridge");
                case "--cpus" -> cpus = cpus(option.value());
                case "--memory" -> memory = size("--memory", option.value());
                case "--pids-limit" -> pids = bytes("--pids-limit", option.value());
                case "--provider" -> {
                    if (!PROVIDERS.contains(option.value())) {
                        throw new UsageException("unknown provider '" + option.value() + "' (available: "
                                + String.join(", ", PROVIDERS) + ")");
                    }
                    provider = option.value();
                }
                case "--url" -> url = url(option.value());
                case "--token-file" -> tokenFile = file("--token-file", option.value());
                default -> {
                    // the subcommand's own options
                }
            }
        }
        if (dockerOption != null && !provider.equals("docker")) {
            throw new UsageException(dockerOption + " applies to --provider docker only");
        }
        if (provider.equals("docker")) {
            if (url != null || tokenFile != null) {
                throw new UsageException(
                        (url != null ? "--url" : "--token-file") + " applies to --provider remote only");
            }
            return new Provider(
                    provider,
                    null,
                    null,
                    new Docker(
                            image == null ? Docker.DEFAULT_IMAGE : image, pull, runtime, network, cpus, memory, pids));
        }
        if (provider.equals("remote")) {
            if (url == null || tokenFile == null) {
                throw new UsageException("--provider remote needs --url URL and --token-file FILE");
            }
            return new Provider(provider, url, tokenFile, null);
        }
        if (url != null || tokenFile != null) {
            throw new UsageException((url != null ? "--url" : "--token-file") + " applies to --provider remote only");
        }
        return Provider.LOCAL;
    }

    private static String oneOf(String option, String value, String... allowed) throws UsageException {
        if (!List.of(allowed).contains(value)) {
            throw new UsageException(
                    "invalid " + option + " '" + value + "': expected one of " + String.join(", ", allowed));
        }
        return value;
    }

    private static double cpus(String text) throws UsageException {
        try {
            double cpus = Double.parseDouble(text);
            if (cpus > 0 && cpus <= 1024) {
                return cpus;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new UsageException("invalid --cpus '" + text + "': expected a positive number such as 0.5");
    }

    /** A byte count with an optional k, m or g suffix (powers of 1024). */
    private static long size(String option, String text) throws UsageException {
        String lower = text.toLowerCase(java.util.Locale.ROOT);
        int shift = 0;
        if (!lower.isEmpty()) {
            switch (lower.charAt(lower.length() - 1)) {
                case 'k' -> shift = 10;
                case 'm' -> shift = 20;
                case 'g' -> shift = 30;
                default -> shift = 0;
            }
        }
        String digits = shift == 0 ? lower : lower.substring(0, lower.length() - 1);
        long n = bytes(option, digits);
        if (n > (Long.MAX_VALUE >> shift)) {
            throw new UsageException(option + " is too large: '" + text + "'");
        }
        return n << shift;
    }

    private static String url(String text) throws UsageException {
        try {
            java.net.URI uri = new java.net.URI(text);
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new UsageException("invalid --url '" + text + "': expected http://HOST:PORT");
            }
            return text;
        } catch (java.net.URISyntaxException e) {
            throw new UsageException("invalid --url '" + text + "': " + e.getReason());
        }
    }

    private static Path file(String option, String text) throws UsageException {
        if (text.isEmpty()) {
            throw new UsageException(option + " needs a file");
        }
        try {
            return Path.of(text);
        } catch (InvalidPathException e) {
            throw new UsageException("invalid " + option + " '" + text + "': " + e.getReason());
        }
    }

    private static Serve parseServe(List<String> args) throws UsageException {
        Set<String> serveOptions = new java.util.HashSet<>(DOCKER_OPTIONS);
        serveOptions.addAll(Set.of("--provider", "--host", "--port", "--token-file"));
        Options o = Options.parse(args, args.size(), serveOptions, Set.of(), true);
        if (!o.positional().isEmpty()) {
            throw new UsageException(
                    "unexpected argument '" + o.positional().get(0) + "'; sandbox serve takes options");
        }
        String host = "127.0.0.1";
        int port = 7070;
        Path tokenFile = null;
        for (Option option : o.given()) {
            switch (option.name()) {
                case "--provider" -> {
                    if (!option.value().equals("local") && !option.value().equals("docker")) {
                        throw new UsageException("sandbox serve serves the local or the docker provider, got"
                                + " --provider '" + option.value() + "'");
                    }
                }
                case "--host" -> host = option.value();
                case "--port" -> {
                    long p = bytes("--port", option.value());
                    if (p > 65535) {
                        throw new UsageException("invalid --port '" + option.value() + "': expected 0 to 65535");
                    }
                    port = (int) p;
                }
                case "--token-file" -> tokenFile = file("--token-file", option.value());
                default -> {
                    // docker settings, read below
                }
            }
        }
        if (tokenFile == null) {
            throw new UsageException("sandbox serve needs --token-file FILE (the bearer token clients must send)");
        }
        List<Option> providerOnly = new ArrayList<>();
        for (Option option : o.given()) {
            if (option.name().equals("--provider") || DOCKER_OPTIONS.contains(option.name())) {
                providerOnly.add(option);
            }
        }
        return new Serve(host, port, tokenFile, provider(new Options(providerOnly, List.of())));
    }

    private static Shell parseShell(List<String> args) throws UsageException {
        int dashes = args.indexOf("--");
        Options o = Options.parse(args, dashes < 0 ? args.size() : dashes, with(Set.of("--session")), Set.of(), false);
        if (!o.positional().isEmpty()) {
            throw new UsageException("unexpected argument '" + o.positional().get(0) + "'; put the command after --");
        }
        String session = null;
        for (Option option : o.given()) {
            if (option.name().equals("--session")) {
                session = id("--session", option.value());
            }
        }
        List<String> command = dashes < 0 ? List.of("/bin/sh") : args.subList(dashes + 1, args.size());
        if (command.isEmpty()) {
            throw new UsageException("missing command after --");
        }
        return new Shell(provider(o), session, List.copyOf(command));
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

    private static long bytes(String option, String text) throws UsageException {
        if (!text.matches("\\d+")) {
            throw new UsageException("invalid " + option + " '" + text + "': expected a number of bytes");
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new UsageException(option + " is too large: '" + text + "'");
        }
    }

    /** One option as given: {@code value} is {@code null} for a flag. */
    record Option(String name, String value) {}

    /**
     * The options of a subcommand, in the order given, and its other arguments.
     *
     * @param given the options
     * @param positional the arguments that are not options
     */
    record Options(List<Option> given, List<String> positional) {
        /**
         * Reads {@code args[0, end)}: {@code --name value}, {@code --name=value} and flags; other arguments are
         * collected as positional, and with {@code dashesEndOptions} everything after {@code --} is.
         */
        static Options parse(
                List<String> args, int end, Set<String> withValue, Set<String> flags, boolean dashesEndOptions)
                throws UsageException {
            List<Option> given = new ArrayList<>();
            List<String> positional = new ArrayList<>();
            boolean onlyPositional = false;
            for (int i = 0; i < end; i++) {
                String arg = args.get(i);
                if (onlyPositional || !arg.startsWith("-") || arg.equals("-")) {
                    positional.add(arg);
                    continue;
                }
                if (arg.equals("--") && dashesEndOptions) {
                    onlyPositional = true;
                    continue;
                }
                int eq = arg.indexOf('=');
                String name = eq < 0 ? arg : arg.substring(0, eq);
                if (flags.contains(name)) {
                    if (eq >= 0) {
                        throw new UsageException("option " + name + " takes no value");
                    }
                    given.add(new Option(name, null));
                } else if (withValue.contains(name)) {
                    String value;
                    if (eq >= 0) {
                        value = arg.substring(eq + 1);
                    } else if (i + 1 < end) {
                        value = args.get(++i);
                    } else {
                        throw new UsageException("option " + name + " needs a value");
                    }
                    given.add(new Option(name, value));
                } else {
                    throw new UsageException("unknown option '" + name + "'");
                }
            }
            return new Options(List.copyOf(given), List.copyOf(positional));
        }
    }
}
