package dev.sandbox;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What to run on a pseudo-terminal and how big the terminal is. Immutable. The command runs as the leader of a new
 * session with the terminal as its controlling terminal, stdin, stdout and stderr; {@code TERM} is set to {@code
 * xterm-256color} unless the environment says otherwise.
 *
 * <pre>{@code
 * PtyOptions options = PtyOptions.shell().withSize(120, 40).withEnv("PS1", "$ ");
 * }</pre>
 */
public final class PtyOptions {
    /** Bytes of recent output kept for replay to a client that attaches: 64 KiB. */
    public static final int DEFAULT_REPLAY_BYTES = BackgroundOptions.MIN_RING_BYTES;

    private final List<String> argv;
    private final @Nullable String cwd;
    private final Map<String, String> env;
    private final int cols;
    private final int rows;
    private final int replayBytes;

    private PtyOptions(
            List<String> argv, @Nullable String cwd, Map<String, String> env, int cols, int rows, int replayBytes) {
        this.argv = argv;
        this.cwd = cwd;
        this.env = env;
        this.cols = cols;
        this.rows = rows;
        this.replayBytes = replayBytes;
    }

    /**
     * An interactive {@code /bin/sh} on an 80x24 terminal.
     *
     * @return the options
     */
    public static PtyOptions shell() {
        return of("/bin/sh");
    }

    /**
     * A command on an 80x24 terminal.
     *
     * @param argv the program and its arguments
     * @return the options
     */
    public static PtyOptions of(String... argv) {
        return new PtyOptions(List.of(argv), null, Map.of(), 80, 24, DEFAULT_REPLAY_BYTES);
    }

    /**
     * Sets the terminal size.
     *
     * @param cols columns, 1 to 1000
     * @param rows rows, 1 to 1000
     * @return a copy with the size set
     */
    public PtyOptions withSize(int cols, int rows) {
        return new PtyOptions(argv, cwd, env, cols, rows, replayBytes);
    }

    /**
     * Sets the working directory, an absolute path; the session's workdir by default.
     *
     * @param cwd the directory
     * @return a copy with the directory set
     */
    public PtyOptions withCwd(String cwd) {
        return new PtyOptions(argv, cwd, env, cols, rows, replayBytes);
    }

    /**
     * Adds an environment variable over the session's environment.
     *
     * @param name the name
     * @param value the value
     * @return a copy with the variable added
     */
    public PtyOptions withEnv(String name, String value) {
        Map<String, String> copy = new LinkedHashMap<>(env);
        copy.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, name));
        return new PtyOptions(argv, cwd, Collections.unmodifiableMap(copy), cols, rows, replayBytes);
    }

    /**
     * Sets how many bytes of recent output are kept for clients that attach later.
     *
     * @param replayBytes at least {@link BackgroundOptions#MIN_RING_BYTES}
     * @return a copy with the size set
     */
    public PtyOptions withReplayBytes(int replayBytes) {
        return new PtyOptions(argv, cwd, env, cols, rows, replayBytes);
    }

    /**
     * The command.
     *
     * @return the argument vector
     */
    public List<String> argv() {
        return argv;
    }

    /**
     * The working directory, if set.
     *
     * @return the directory or empty
     */
    public Optional<String> cwd() {
        return Optional.ofNullable(cwd);
    }

    /**
     * Extra environment variables.
     *
     * @return an unmodifiable map
     */
    public Map<String, String> env() {
        return env;
    }

    /**
     * Terminal columns.
     *
     * @return the width
     */
    public int cols() {
        return cols;
    }

    /**
     * Terminal rows.
     *
     * @return the height
     */
    public int rows() {
        return rows;
    }

    /**
     * Bytes of output kept for replay.
     *
     * @return the size
     */
    public int replayBytes() {
        return replayBytes;
    }

    /**
     * Checks the options and turns them into the options of the command they run.
     *
     * @return exec options carrying argv, cwd and env (with {@code TERM} defaulted)
     * @throws InvalidArgumentException naming the field that is wrong and its value
     */
    public ExecOptions toExecOptions() {
        checkSize("cols", cols);
        checkSize("rows", rows);
        if (replayBytes < BackgroundOptions.MIN_RING_BYTES) {
            throw new InvalidArgumentException(
                    "replayBytes",
                    "replayBytes must be at least " + BackgroundOptions.MIN_RING_BYTES + ", got " + replayBytes);
        }
        Map<String, String> withTerm = new LinkedHashMap<>();
        withTerm.put("TERM", "xterm-256color");
        withTerm.putAll(env);
        ExecOptions options = ExecOptions.of(argv).withEnv(withTerm).withCharset(StandardCharsets.UTF_8);
        if (cwd != null) {
            options = options.withCwd(cwd);
        }
        return options.validate();
    }

    static void checkSize(String field, int value) {
        if (value < 1 || value > 1000) {
            throw new InvalidArgumentException(field, field + " must be from 1 to 1000, got " + value);
        }
    }

    @Override
    public String toString() {
        return "PtyOptions{argv=" + argv + ", cwd=" + cwd + ", env=" + env.keySet() + ", size=" + cols + "x" + rows
                + "}";
    }
}
