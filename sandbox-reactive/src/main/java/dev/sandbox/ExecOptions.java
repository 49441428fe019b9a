package dev.sandbox;

import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * What to run and how: the argument vector, working directory, environment, timeouts, stdin, charset and output
 * limits. Instances are immutable; every {@code with} method returns a copy.
 *
 * <p>Options are checked when a command is started, and a problem arrives as an {@link InvalidArgumentException}
 * in the error channel naming the field and value: an empty argv, a NUL byte in an argument, environment entry or
 * cwd, an argument vector over {@value #MAX_ARGV_BYTES} bytes in all, a relative cwd, a non-positive timeout.
 *
 * <pre>{@code
 * ExecOptions options = ExecOptions.of("python3", "script.py")
 *     .withCwd("/tmp/work")
 *     .withEnv("PYTHONUNBUFFERED", "1")
 *     .withTimeout(Duration.ofSeconds(30));
 * }</pre>
 */
public final class ExecOptions {

    /** Upper bound on the total size of the argument vector in bytes (UTF-8, one terminator per argument). */
    public static final int MAX_ARGV_BYTES = 64 * 1024;

    /**
     * Upper bound on one environment variable, {@code NAME=value} and its terminator, in bytes (UTF-8): Linux refuses
     * to start a program with a longer one ({@code MAX_ARG_STRLEN}, 128 KiB).
     */
    public static final int MAX_ENV_VARIABLE_BYTES = 128 * 1024;

    /** Upper bound on the total size of an environment ({@code env}, or a session's env or secrets) in bytes. */
    public static final int MAX_ENV_BYTES = 1024 * 1024;

    /** Default maximum line length in bytes; longer lines are split and flagged {@link ExecEvent.Line#partial()}. */
    public static final int DEFAULT_MAX_LINE_LENGTH = 64 * 1024;

    /** Default per-stream byte cap of {@link SandboxSession#run(ExecOptions)}: 1 MiB. */
    public static final long DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;

    /**
     * Default quiet interval after which output without a line terminator is delivered as a {@linkplain
     * ExecEvent.Line#partial() partial} line: 50 ms.
     */
    public static final Duration DEFAULT_PARTIAL_LINE_DELAY = Duration.ofMillis(50);

    /** Upper bound of {@link #withPartialLineDelay(Duration)}: one hour. */
    public static final Duration MAX_PARTIAL_LINE_DELAY = Duration.ofHours(1);

    private final List<String> argv;
    private final @Nullable String cwd;
    private final Map<String, String> env;
    private final @Nullable Duration timeout;
    private final @Nullable Duration idleTimeout;
    private final @Nullable Publisher<ByteBuffer> stdin;
    private final Charset charset;
    private final int maxLineLength;
    private final long maxOutputBytes;
    private final Duration partialLineDelay;
    private final boolean byteOutput;

    private ExecOptions(
            List<String> argv,
            @Nullable String cwd,
            Map<String, String> env,
            @Nullable Duration timeout,
            @Nullable Duration idleTimeout,
            @Nullable Publisher<ByteBuffer> stdin,
            Charset charset,
            int maxLineLength,
            long maxOutputBytes,
            Duration partialLineDelay,
            boolean byteOutput) {
        this.argv = argv;
        this.cwd = cwd;
        this.env = env;
        this.timeout = timeout;
        this.idleTimeout = idleTimeout;
        this.stdin = stdin;
        this.charset = charset;
        this.maxLineLength = maxLineLength;
        this.maxOutputBytes = maxOutputBytes;
        this.partialLineDelay = partialLineDelay;
        this.byteOutput = byteOutput;
    }

    /**
     * Runs a program with arguments; {@code argv[0]} is looked up on the {@code PATH} of the command's environment
     * unless it contains a {@code /}.
     *
     * @param argv the program and its arguments
     * @return options with defaults for everything else
     */
    public static ExecOptions of(String... argv) {
        Objects.requireNonNull(argv, "argv");
        return of(List.of(argv));
    }

    /**
     * Runs a program with arguments.
     *
     * @param argv the program and its arguments
     * @return options with defaults for everything else
     */
    public static ExecOptions of(List<String> argv) {
        Objects.requireNonNull(argv, "argv");
        List<String> copy = Collections.unmodifiableList(new ArrayList<>(argv));
        for (int i = 0; i < copy.size(); i++) {
            Objects.requireNonNull(copy.get(i), "argv[" + i + "]");
        }
        return new ExecOptions(
                copy,
                null,
                Map.of(),
                null,
                null,
                null,
                StandardCharsets.UTF_8,
                DEFAULT_MAX_LINE_LENGTH,
                DEFAULT_MAX_OUTPUT_BYTES,
                DEFAULT_PARTIAL_LINE_DELAY,
                false);
    }

    /**
     * Runs a shell command line with {@code /bin/sh -c}.
     *
     * @param commandLine the command line
     * @return options running {@code sh -c commandLine}
     */
    public static ExecOptions shell(String commandLine) {
        Objects.requireNonNull(commandLine, "commandLine");
        return of("/bin/sh", "-c", commandLine);
    }

    /**
     * Sets the working directory; it must be absolute. Without it the command starts in the session's workdir.
     *
     * @param cwd an absolute path inside the sandbox
     * @return a copy with the working directory set
     */
    public ExecOptions withCwd(String cwd) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * Adds environment variables over the session's environment.
     *
     * @param vars names and values
     * @return a copy with the variables added
     */
    public ExecOptions withEnv(Map<String, String> vars) {
        Map<String, String> merged = new LinkedHashMap<>(env);
        vars.forEach((k, v) -> merged.put(Objects.requireNonNull(k, "env name"), Objects.requireNonNull(v, k)));
        return new ExecOptions(
                argv,
                cwd,
                Collections.unmodifiableMap(merged),
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * Adds one environment variable over the session's environment.
     *
     * @param name the variable's name
     * @param value its value
     * @return a copy with the variable added
     */
    public ExecOptions withEnv(String name, String value) {
        return withEnv(Map.of(name, value));
    }

    /**
     * Kills the command (and its children) when it runs longer than this; it then ends with exit code 124 and the
     * output read so far is kept.
     *
     * @param timeout a positive duration, or {@code null} for none
     * @return a copy with the timeout set
     */
    public ExecOptions withTimeout(@Nullable Duration timeout) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * Kills the command when it writes no output for this long while a subscriber is waiting for output; it then ends
     * with exit code 124.
     *
     * @param idleTimeout a positive duration, or {@code null} for none
     * @return a copy with the idle timeout set
     */
    public ExecOptions withIdleTimeout(@Nullable Duration idleTimeout) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * Feeds the command's standard input from a publisher; stdin is closed when the publisher completes. Without it,
     * stdin reads from {@code /dev/null}.
     *
     * @param stdin the bytes to write, consumed with backpressure
     * @return a copy with stdin set
     */
    public ExecOptions withStdin(Publisher<ByteBuffer> stdin) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * Feeds the command's standard input from bytes, then closes it.
     *
     * @param bytes the bytes to write
     * @return a copy with stdin set
     */
    public ExecOptions withStdin(byte[] bytes) {
        byte[] copy = bytes.clone();
        return withStdin(Flux.defer(() -> Flux.just(ByteBuffer.wrap(copy).asReadOnlyBuffer())));
    }

    /**
     * Sets the charset output is decoded with (UTF-8 by default).
     *
     * @param charset the charset
     * @return a copy with the charset set
     */
    public ExecOptions withCharset(Charset charset) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                Objects.requireNonNull(charset, "charset"),
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * Sets the longest line, in bytes, emitted as one event; longer lines are split and flagged partial.
     *
     * @param maxLineLength at least 16
     * @return a copy with the limit set
     */
    public ExecOptions withMaxLineLength(int maxLineLength) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * Sets the per-stream byte cap of {@link SandboxSession#run(ExecOptions)}; output past it is counted and
     * dropped, keeping the head.
     *
     * @param maxOutputBytes zero or more bytes
     * @return a copy with the cap set
     */
    public ExecOptions withMaxOutputBytes(long maxOutputBytes) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * Sets how long output without a line terminator waits for the rest of its line: when a stream has bytes pending
     * after the command wrote nothing more to it for this long (a prompt such as {@code Name: } followed by a read),
     * those bytes are delivered as a line event flagged {@link ExecEvent.Line#partial() partial}, with exact offsets,
     * and the rest of the line comes in the next line event of that stream. A multi-byte character is never split:
     * an incomplete trailing UTF-8 sequence waits for its remaining bytes. Time spent waiting for a subscriber that
     * has not asked for more does not count as quiet. Applies to {@link SandboxSession#exec(ExecOptions)} and to the
     * output of a background process started with these options; not to {@code run}, which collects whole streams.
     *
     * <pre>{@code
     * ExecOptions prompt = ExecOptions.shell("printf 'Name: '; read n; echo \"hi $n\"")
     *     .withPartialLineDelay(Duration.ofMillis(20));
     * }</pre>
     *
     * @param delay from {@link Duration#ZERO} (deliver whatever was read at once) to {@link #MAX_PARTIAL_LINE_DELAY};
     *     the default is {@link #DEFAULT_PARTIAL_LINE_DELAY}
     * @return a copy with the delay set
     */
    public ExecOptions withPartialLineDelay(Duration delay) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                Objects.requireNonNull(delay, "partialLineDelay"),
                byteOutput);
    }

    /**
     * Asks for the command's output as raw bytes rather than lines: {@link SandboxSession#exec(ExecOptions)} then
     * emits {@link ExecEvent.Chunk} events (the bytes as read, not decoded and not split into lines, at most {@value
     * ExecEvent.Chunk#MAX_BYTES} bytes each, with their stream offsets) and the {@link ExecEvent.Exit} last, with
     * the same backpressure as lines. A background process started with these options gives chunks from {@code
     * output} and {@code snapshot} too. {@link SandboxSession#run(ExecOptions)} is not affected: an {@link
     * ExecResult} always holds text; use {@code exec} for binary output. The charset, maximum line length and
     * partial-line delay do not apply to chunks.
     *
     * <pre>{@code
     * session.exec(ExecOptions.of("cat", "/bin/sh").withByteOutput(true))
     *     .ofType(ExecEvent.Chunk.class)
     *     .subscribe(chunk -> channel.write(chunk.data()));
     * }</pre>
     *
     * @param byteOutput {@code true} for {@link ExecEvent.Chunk} events, {@code false} (the default) for lines
     * @return a copy with the output form set
     */
    public ExecOptions withByteOutput(boolean byteOutput) {
        return new ExecOptions(
                argv,
                cwd,
                env,
                timeout,
                idleTimeout,
                stdin,
                charset,
                maxLineLength,
                maxOutputBytes,
                partialLineDelay,
                byteOutput);
    }

    /**
     * The quiet interval after which pending output without a line terminator is delivered as a partial line.
     *
     * @return the delay; {@link Duration#ZERO} means at once
     */
    public Duration partialLineDelay() {
        return partialLineDelay;
    }

    /**
     * Whether output comes as {@link ExecEvent.Chunk} events of raw bytes instead of lines.
     *
     * @return {@code true} for chunks
     */
    public boolean byteOutput() {
        return byteOutput;
    }

    /**
     * The program and its arguments.
     *
     * @return an unmodifiable list
     */
    public List<String> argv() {
        return argv;
    }

    /**
     * The working directory, if set.
     *
     * @return the absolute path, or empty for the session's workdir
     */
    public Optional<String> cwd() {
        return Optional.ofNullable(cwd);
    }

    /**
     * Environment variables added over the session's environment.
     *
     * @return an unmodifiable map
     */
    public Map<String, String> env() {
        return env;
    }

    /**
     * The wall-clock timeout, if set.
     *
     * @return the timeout or empty
     */
    public Optional<Duration> timeout() {
        return Optional.ofNullable(timeout);
    }

    /**
     * The idle (no output) timeout, if set.
     *
     * @return the idle timeout or empty
     */
    public Optional<Duration> idleTimeout() {
        return Optional.ofNullable(idleTimeout);
    }

    /**
     * The stdin publisher, if set.
     *
     * @return the publisher or empty for {@code /dev/null}
     */
    public Optional<Publisher<ByteBuffer>> stdin() {
        return Optional.ofNullable(stdin);
    }

    /**
     * The charset output is decoded with.
     *
     * @return the charset
     */
    public Charset charset() {
        return charset;
    }

    /**
     * The longest line in bytes emitted as one event.
     *
     * @return the limit
     */
    public int maxLineLength() {
        return maxLineLength;
    }

    /**
     * The per-stream byte cap of {@code run}.
     *
     * @return the cap
     */
    public long maxOutputBytes() {
        return maxOutputBytes;
    }

    /**
     * Checks the options as a provider does before starting anything.
     *
     * @return these options
     * @throws InvalidArgumentException naming the first field that is wrong and its value
     */
    public ExecOptions validate() {
        if (argv.isEmpty()) {
            throw new InvalidArgumentException("argv", "argv must name a program, got an empty argument list");
        }
        if (argv.get(0).isEmpty()) {
            throw new InvalidArgumentException("argv[0]", "argv[0] must name a program, got ''");
        }
        long total = 0;
        for (int i = 0; i < argv.size(); i++) {
            String arg = argv.get(i);
            if (arg.indexOf('\0') >= 0) {
                throw new InvalidArgumentException(
                        "argv[" + i + "]", "argv[" + i + "] contains a NUL byte: '" + printable(arg) + "'");
            }
            total += arg.getBytes(StandardCharsets.UTF_8).length + 1L;
        }
        if (total > MAX_ARGV_BYTES) {
            throw new InvalidArgumentException(
                    "argv",
                    "argv is " + total + " bytes in all, over the limit of " + MAX_ARGV_BYTES
                            + " bytes; pass large input through stdin or a file");
        }
        if (cwd != null) {
            validatePath("cwd", cwd);
        }
        validateEnv("env", env);
        validatePositive("timeout", timeout);
        validatePositive("idleTimeout", idleTimeout);
        if (maxLineLength < 16) {
            throw new InvalidArgumentException(
                    "maxLineLength", "maxLineLength must be at least 16 bytes, got " + maxLineLength);
        }
        if (partialLineDelay.isNegative() || partialLineDelay.compareTo(MAX_PARTIAL_LINE_DELAY) > 0) {
            throw new InvalidArgumentException(
                    "partialLineDelay",
                    "partialLineDelay must be from 0 to " + MAX_PARTIAL_LINE_DELAY + ", got " + partialLineDelay);
        }
        if (maxOutputBytes < 0) {
            throw new InvalidArgumentException(
                    "maxOutputBytes", "maxOutputBytes must not be negative, got " + maxOutputBytes);
        }
        return this;
    }

    static void validatePath(String field, String path) {
        if (path.indexOf('\0') >= 0) {
            throw new InvalidArgumentException(field, field + " contains a NUL byte: '" + printable(path) + "'");
        }
        if (!path.startsWith("/")) {
            throw new InvalidArgumentException(field, field + " must be an absolute path, got '" + path + "'");
        }
    }

    static void validateEnv(String field, Map<String, String> vars) {
        long total = 0;
        for (Map.Entry<String, String> e : vars.entrySet()) {
            long bytes = e.getKey().getBytes(StandardCharsets.UTF_8).length
                    + e.getValue().getBytes(StandardCharsets.UTF_8).length
                    + 2L;
            if (bytes > MAX_ENV_VARIABLE_BYTES) {
                throw new InvalidArgumentException(
                        field + "[" + printable(e.getKey()) + "]",
                        field + "[" + printable(e.getKey()) + "] is " + bytes + " bytes, over the limit of "
                                + MAX_ENV_VARIABLE_BYTES + " bytes a variable; pass large input through stdin or a"
                                + " file");
            }
            total += bytes;
            if (total > MAX_ENV_BYTES) {
                throw new InvalidArgumentException(
                        field,
                        field + " is over the limit of " + MAX_ENV_BYTES + " bytes in all; pass large input through"
                                + " stdin or a file");
            }
            String name = e.getKey();
            if (name.isEmpty() || name.indexOf('=') >= 0 || name.indexOf('\0') >= 0) {
                throw new InvalidArgumentException(
                        field, field + " has an invalid variable name: '" + printable(name) + "'");
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new InvalidArgumentException(
                        field + "[" + name + "]", field + "[" + name + "] contains a NUL byte");
            }
        }
    }

    static void validatePositive(String field, @Nullable Duration d) {
        if (d != null && (d.isZero() || d.isNegative())) {
            throw new InvalidArgumentException(field, field + " must be positive, got " + d);
        }
    }

    private static String printable(String s) {
        String shown = s.replace("\0", "\\0");
        return shown.length() > 80 ? shown.substring(0, 80) + "..." : shown;
    }

    @Override
    public String toString() {
        // env values may hold credentials: show names only
        return "ExecOptions{argv=" + (argv.size() > 8 ? argv.subList(0, 8) + "..." : argv) + ", cwd=" + cwd
                + ", env=" + env.keySet() + ", timeout=" + timeout + ", idleTimeout=" + idleTimeout + ", stdin="
                + (stdin != null) + ", charset=" + charset + ", partialLineDelay=" + partialLineDelay + ", byteOutput="
                + byteOutput + "}";
    }
}
