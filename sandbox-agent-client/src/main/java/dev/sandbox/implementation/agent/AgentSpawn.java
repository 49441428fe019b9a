package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.reactivestreams.Publisher;

/**
 * What to start: the command line, environment laid over the agent's, working directory, standard input and
 * terminal.
 *
 * @param argv the command line; {@code argv[0]} is searched on {@code PATH} unless it contains a {@code /}
 * @param env variables laid over the container's environment
 * @param cwd the working directory, or empty for the agent's
 * @param stdin standard input, or {@code null} for {@code /dev/null}
 * @param cols terminal columns, or 0 without a terminal
 * @param rows terminal rows, or 0 without a terminal
 */
public record AgentSpawn(
        List<String> argv, Map<String, String> env, String cwd, Publisher<ByteBuffer> stdin, int cols, int rows) {

    /** Validates and copies; a bad value fails with an {@link IllegalArgumentException} naming the field. */
    public AgentSpawn {
        if (argv == null || argv.isEmpty()) {
            throw new IllegalArgumentException("argv must have at least one element");
        }
        argv = List.copyOf(argv);
        for (String a : argv) {
            requireNoNul("argv", a);
        }
        env = env == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (e.getKey().isEmpty() || e.getKey().indexOf('=') >= 0) {
                throw new IllegalArgumentException("env name must be non-empty without '=': " + e.getKey());
            }
            requireNoNul("env " + e.getKey(), e.getKey());
            requireNoNul("env " + e.getKey(), e.getValue());
        }
        cwd = cwd == null ? "" : cwd;
        requireNoNul("cwd", cwd);
        if (cols < 0 || cols > 0xFFFF || rows < 0 || rows > 0xFFFF || (cols == 0) != (rows == 0)) {
            throw new IllegalArgumentException("terminal size must be both 0 or 1..65535, was " + cols + "x" + rows);
        }
    }

    /**
     * A command without stdin or terminal.
     *
     * @param argv the command line
     * @return the spec
     */
    public static AgentSpawn of(String... argv) {
        return new AgentSpawn(List.of(argv), Map.of(), "", null, 0, 0);
    }

    /**
     * This spec with standard input.
     *
     * @param input the bytes to feed
     * @return a new spec
     */
    public AgentSpawn withStdin(Publisher<ByteBuffer> input) {
        return new AgentSpawn(argv, env, cwd, input, cols, rows);
    }

    /**
     * This spec on a terminal.
     *
     * @param c columns
     * @param r rows
     * @return a new spec
     */
    public AgentSpawn withPty(int c, int r) {
        return new AgentSpawn(argv, env, cwd, stdin, c, r);
    }

    /**
     * Whether the process gets a terminal.
     *
     * @return true with a terminal
     */
    public boolean pty() {
        return cols > 0;
    }

    List<String> envEntries() {
        return env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
    }

    private static void requireNoNul(String field, String value) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        if (value.indexOf('\0') >= 0) {
            throw new IllegalArgumentException(field + " must not contain a NUL byte");
        }
    }
}
