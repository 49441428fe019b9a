package dev.sandbox.tools;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The sandbox operations an AI model may call, over one session: run a command, run a snippet of Python, JavaScript or
 * shell, and read, write and list files. Each call is bounded by the {@link ToolLimits} (a timeout, caps on output,
 * file content and list length) and answers the text the model reads, saying what was cut: a command that fails, times
 * out or writes too much is an answer, not an error. Only bad arguments ({@link InvalidArgumentException} naming the
 * argument) and a session that cannot be used (it ended, the provider is closed) fail the returned {@link Mono}.
 *
 * <p>The Spring AI, LangChain4j and MCP integrations are thin adapters of this class. Everything the session sends
 * back (output, file names, file content) comes from code the model chose to run and is shown as text only: file
 * names have their control characters escaped so that a name cannot forge lines of an answer.
 *
 * <pre>{@code
 * try (SandboxTools tools = SandboxTools.lazy(provider, SessionOptions.defaults(), ToolLimits.defaults())) {
 *     String answer = tools.runCode(CodeLanguage.PYTHON, "print(6 * 7)").block(Duration.ofMinutes(2));
 *     // exit code: 0
 *     // stdout:
 *     // 42
 *     // stderr: (empty)
 * }
 * }</pre>
 */
public final class SandboxTools implements AutoCloseable {

    /** The longest command line {@link #runCommand(String)} accepts, in characters. */
    public static final int MAX_COMMAND_CHARS = 128 * 1024;

    /** The largest snippet {@link #runCode(CodeLanguage, String)} accepts, in UTF-8 bytes. */
    public static final int MAX_CODE_BYTES = 1024 * 1024;

    /** The largest content {@link #writeFile(String, String)} accepts, in UTF-8 bytes. */
    public static final int MAX_WRITE_BYTES = 16 * 1024 * 1024;

    /** The longest path accepted, in characters. */
    public static final int MAX_PATH_CHARS = 4096;

    /** How much longer than the tool timeout a call may take before it fails (session creation, slow daemons). */
    static final Duration GUARD = Duration.ofSeconds(30);

    private final @Nullable SandboxSession given;
    private final ToolLimits limits;
    private final Mono<SandboxSession> session;
    private final AtomicReference<SandboxSession> created = new AtomicReference<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Over the session given, or (without one) over a session made from the provider and options on first use. */
    private SandboxTools(
            @Nullable SandboxSession given,
            @Nullable SandboxProvider provider,
            @Nullable SessionOptions options,
            ToolLimits limits) {
        this.given = given;
        this.limits = limits;
        this.session = given != null
                ? Mono.just(given)
                : lazySession(Objects.requireNonNull(provider, "provider"), Objects.requireNonNull(options, "options"));
    }

    /**
     * Tools over a session the caller owns: {@link #close()} leaves it running.
     *
     * <pre>{@code
     * SandboxTools tools = SandboxTools.of(session, ToolLimits.defaults());
     * }</pre>
     *
     * @param session the session the tools use
     * @param limits the bounds of every call
     * @return the tools
     */
    public static SandboxTools of(SandboxSession session, ToolLimits limits) {
        return new SandboxTools(
                Objects.requireNonNull(session, "session"), null, null, Objects.requireNonNull(limits, "limits"));
    }

    /**
     * Tools that create their own session from the provider on their first call (one session, however many calls
     * come at once) and destroy it on {@link #close()} or {@link #closeAsync()}. A creation that fails is tried again
     * on the next call. When the session ends by itself (its lifetime or idle timeout), later calls fail with the
     * provider's {@link dev.sandbox.SessionClosedException}: files the model wrote are gone, so no new session is made
     * behind its back.
     *
     * <pre>{@code
     * SandboxTools tools = SandboxTools.lazy(provider, SessionOptions.defaults().withLifetime(Duration.ofMinutes(30)),
     *         ToolLimits.defaults());
     * }</pre>
     *
     * @param provider where the session is created
     * @param options the session's options
     * @param limits the bounds of every call
     * @return the tools
     */
    public static SandboxTools lazy(SandboxProvider provider, SessionOptions options, ToolLimits limits) {
        return new SandboxTools(
                null,
                Objects.requireNonNull(provider, "provider"),
                Objects.requireNonNull(options, "options"),
                Objects.requireNonNull(limits, "limits"));
    }

    private Mono<SandboxSession> lazySession(SandboxProvider provider, SessionOptions options) {
        return Mono.defer(() -> provider.create(options))
                .flatMap(s -> {
                    created.set(s);
                    if (closed.get() && created.compareAndSet(s, null)) {
                        return s.destroy().then(Mono.<SandboxSession>error(closedError()));
                    }
                    return Mono.just(s);
                })
                .cache(s -> Duration.ofMillis(Long.MAX_VALUE), e -> Duration.ZERO, () -> Duration.ZERO);
    }

    private static SandboxStateException closedError() {
        return new SandboxStateException("these sandbox tools are closed");
    }

    /**
     * The session the tools use; for {@linkplain #lazy lazy} tools, created by the first call (this one or a tool's).
     *
     * @return the session
     */
    public Mono<SandboxSession> session() {
        return closed.get() ? Mono.error(closedError()) : session;
    }

    /**
     * The bounds of every call.
     *
     * @return the limits
     */
    public ToolLimits limits() {
        return limits;
    }

    /**
     * Runs a shell command line ({@code sh -c COMMAND}) in the session's working directory and answers its exit code
     * and output, each stream capped at {@link ToolLimits#maxOutputBytes()}.
     *
     * @param command the command line, such as {@code ls -l | wc -l}
     * @return the answer; {@link InvalidArgumentException} naming {@code command} when it is empty or longer than
     *     {@link #MAX_COMMAND_CHARS}
     */
    public Mono<String> runCommand(String command) {
        return runCommand(command, null);
    }

    /**
     * Runs a shell command line as {@link #runCommand(String)} does and hands each piece of output to {@code output}
     * as it arrives, as {@code stdout: TEXT} or {@code stderr: TEXT} (a line without its newline, or the pending part
     * of one the command has not finished, such as a prompt). {@code output} is called on a non-blocking thread, one
     * call at a time: it must not block; an exception it throws ends the command.
     *
     * @param command the command line
     * @param output receives the output while the command runs; {@code null} for none
     * @return the answer, as for {@link #runCommand(String)}
     */
    public Mono<String> runCommand(String command, @Nullable Consumer<String> output) {
        if (command == null || command.isBlank()) {
            return Mono.error(new InvalidArgumentException("command", "command must not be empty"));
        }
        if (command.length() > MAX_COMMAND_CHARS) {
            return Mono.error(new InvalidArgumentException(
                    "command",
                    "command must be at most " + MAX_COMMAND_CHARS + " characters, got " + command.length()));
        }
        return exec(ExecOptions.shell(command), "sh", output);
    }

    /**
     * Runs a snippet with the language's interpreter, the code on its standard input (see {@link CodeLanguage}), and
     * answers as {@link #runCommand(String)} does. An image without the interpreter gets an answer saying it could not
     * be started.
     *
     * @param language the language
     * @param code the program text
     * @return the answer; {@link InvalidArgumentException} naming {@code language} or {@code code} when missing, or
     *     {@code code} when larger than {@link #MAX_CODE_BYTES}
     */
    public Mono<String> runCode(CodeLanguage language, String code) {
        return runCode(language, code, null);
    }

    /**
     * Runs a snippet as {@link #runCode(CodeLanguage, String)} does, handing its output to {@code output} as it
     * arrives (see {@link #runCommand(String, Consumer)}).
     *
     * @param language the language
     * @param code the program text
     * @param output receives the output while the snippet runs; {@code null} for none
     * @return the answer
     */
    public Mono<String> runCode(CodeLanguage language, String code, @Nullable Consumer<String> output) {
        if (language == null) {
            return Mono.error(
                    new InvalidArgumentException("language", "language must be one of python, javascript or shell"));
        }
        if (code == null || code.isBlank()) {
            return Mono.error(new InvalidArgumentException("code", "code must not be empty"));
        }
        byte[] bytes = code.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_CODE_BYTES) {
            return Mono.error(new InvalidArgumentException(
                    "code", "code must be at most " + MAX_CODE_BYTES + " bytes, got " + bytes.length));
        }
        return exec(
                ExecOptions.of(language.argv()).withStdin(bytes),
                language.argv().get(0),
                output);
    }

    private Mono<String> exec(ExecOptions base, String program, @Nullable Consumer<String> output) {
        ExecOptions options = base.withTimeout(limits.timeout());
        return session()
                .flatMap(s -> {
                    Capture stdout = new Capture(limits.maxOutputBytes());
                    Capture stderr = new Capture(limits.maxOutputBytes());
                    AtomicReference<ExecEvent.Exit> exit = new AtomicReference<>();
                    return s.exec(options)
                            .doOnNext(event -> {
                                if (event instanceof ExecEvent.Line line) {
                                    boolean out = line.stream() == ExecEvent.StreamKind.STDOUT;
                                    (out ? stdout : stderr).add(line);
                                    if (output != null) {
                                        output.accept((out ? "stdout: " : "stderr: ") + line.text());
                                    }
                                } else if (event instanceof ExecEvent.Exit e) {
                                    exit.set(e);
                                }
                            })
                            .then(Mono.fromSupplier(() -> answer(exit.get(), stdout, stderr)));
                })
                .onErrorResume(
                        ProcessLaunchException.class,
                        e -> Mono.just(program + " could not be started in this sandbox: " + e.getMessage()))
                .timeout(limits.timeout().plus(GUARD), Mono.error(() -> timeoutError("a command")));
    }

    private String answer(ExecEvent.@Nullable Exit exit, Capture stdout, Capture stderr) {
        StringBuilder answer = new StringBuilder();
        if (exit == null) {
            answer.append("the command ended without an exit status\n");
        } else {
            answer.append("exit code: ").append(exit.code()).append('\n');
            switch (exit.termination()) {
                case TIMED_OUT, IDLE_TIMED_OUT ->
                    answer.append("[timed out after ")
                            .append(seconds(limits.timeout()))
                            .append(": the command was killed]\n");
                case SIGNALED ->
                    answer.append("[killed by signal ")
                            .append(exit.code() - 128)
                            .append("]\n");
                default -> {}
            }
        }
        stdout.appendTo(answer, "stdout");
        stderr.appendTo(answer, "stderr");
        return answer.toString().stripTrailing();
    }

    /**
     * Reads a file as UTF-8 text (malformed bytes replaced), at most {@link ToolLimits#maxReadBytes()} of it; the
     * answer says when the rest was left out. A directory, a file that is not regular (a pipe would wait forever) or
     * a binary file (one with a NUL byte in the part read) is an answer saying so, as is a file that does not exist.
     *
     * @param path the file, absolute or relative to the session's working directory
     * @return the content, or what kept it from being read
     */
    public Mono<String> readFile(String path) {
        InvalidArgumentException bad = checkPath(path);
        if (bad != null) {
            return Mono.error(bad);
        }
        int cap = limits.maxReadBytes();
        return session()
                .flatMap(s -> s.files().stat(path).flatMap(info -> switch (info.type()) {
                    case DIRECTORY -> Mono.just(printable(path) + " is a directory; list it instead");
                    case OTHER -> Mono.just(printable(path) + " is not a regular file; it is not read");
                    default -> s.files().readAllBytes(path, 0, cap).map(bytes -> fileText(path, info, bytes, cap));
                }))
                .onErrorResume(
                        FileOperationException.class,
                        e -> Mono.just("cannot read " + printable(path) + ": " + e.getMessage()))
                .timeout(limits.timeout().plus(GUARD), Mono.error(() -> timeoutError("reading a file")));
    }

    private static String fileText(String path, FileInfo info, byte[] bytes, int cap) {
        for (byte b : bytes) {
            if (b == 0) {
                return printable(path) + " is a binary file of " + info.size() + " bytes; it is not shown as text";
            }
        }
        int shown = Capture.boundary(bytes, bytes.length);
        String text = new String(bytes, 0, shown, StandardCharsets.UTF_8);
        boolean cut = bytes.length >= cap && (info.type() != FileInfo.Type.FILE || info.size() > bytes.length);
        if (!cut) {
            return text;
        }
        String of = info.type() == FileInfo.Type.FILE ? " of " + info.size() : "";
        return text + (text.endsWith("\n") ? "" : "\n") + "[truncated: the first " + shown + of + " bytes are shown]";
    }

    /**
     * Writes a text file (UTF-8), replacing it if it exists and creating missing parent directories. A path that
     * cannot be written is an answer saying why.
     *
     * @param path the file, absolute or relative to the session's working directory
     * @param content the text
     * @return {@code wrote N bytes to PATH}, or what kept it from being written; {@link InvalidArgumentException}
     *     naming {@code content} when it is larger than {@link #MAX_WRITE_BYTES}
     */
    public Mono<String> writeFile(String path, String content) {
        InvalidArgumentException bad = checkPath(path);
        if (bad != null) {
            return Mono.error(bad);
        }
        if (content == null) {
            return Mono.error(new InvalidArgumentException("content", "content must be given (it may be empty)"));
        }
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_WRITE_BYTES) {
            return Mono.error(new InvalidArgumentException(
                    "content", "content must be at most " + MAX_WRITE_BYTES + " bytes, got " + bytes.length));
        }
        return session()
                .flatMap(s -> s.files().write(path, bytes))
                .map(info -> "wrote " + bytes.length + " bytes to " + printable(info.path()))
                .onErrorResume(
                        FileOperationException.class,
                        e -> Mono.just("cannot write " + printable(path) + ": " + e.getMessage()))
                .timeout(limits.timeout().plus(GUARD), Mono.error(() -> timeoutError("writing a file")));
    }

    /**
     * Lists a directory's entries (not recursively), one line each as {@code ls -l} would show the type and mode,
     * then the size and the name; a directory's name ends with {@code /}, a link's shows its target. At most {@link
     * ToolLimits#maxListEntries()} entries; the answer says when there were more.
     *
     * @param path the directory, absolute or relative to the session's working directory; empty or {@code null} for
     *     the working directory
     * @return the listing, or what kept it from being listed
     */
    public Mono<String> listFiles(@Nullable String path) {
        String dir = path == null || path.isBlank() ? "." : path;
        InvalidArgumentException bad = checkPath(dir);
        if (bad != null) {
            return Mono.error(bad);
        }
        int cap = limits.maxListEntries();
        return session()
                .flatMap(s -> s.files().list(dir).take(cap + 1L).collectList())
                .map(entries -> listing(dir, entries, cap))
                .onErrorResume(
                        FileOperationException.class,
                        e -> Mono.just("cannot list " + printable(dir) + ": " + e.getMessage()))
                .timeout(limits.timeout().plus(GUARD), Mono.error(() -> timeoutError("listing a directory")));
    }

    private static String listing(String dir, List<FileInfo> entries, int cap) {
        if (entries.isEmpty()) {
            return printable(dir) + " is empty";
        }
        StringBuilder answer = new StringBuilder();
        for (FileInfo f : entries.subList(0, Math.min(cap, entries.size()))) {
            answer.append(f.modeString())
                    .append(' ')
                    .append(String.format("%10d", f.size()))
                    .append(' ')
                    .append(printable(f.name()));
            if (f.type() == FileInfo.Type.DIRECTORY) {
                answer.append('/');
            }
            f.symlinkTarget().ifPresent(t -> answer.append(" -> ").append(printable(t)));
            answer.append('\n');
        }
        if (entries.size() > cap) {
            answer.append("[more entries not shown: the first ").append(cap).append(" are listed]\n");
        }
        return answer.toString().stripTrailing();
    }

    private static @Nullable InvalidArgumentException checkPath(String path) {
        if (path == null || path.isBlank()) {
            return new InvalidArgumentException("path", "path must not be empty");
        }
        if (path.length() > MAX_PATH_CHARS) {
            return new InvalidArgumentException(
                    "path", "path must be at most " + MAX_PATH_CHARS + " characters, got " + path.length());
        }
        if (path.indexOf('\0') >= 0) {
            return new InvalidArgumentException("path", "path must not contain a NUL character");
        }
        return null;
    }

    /** A name from the sandbox with its control characters escaped, so that it stays on its line. */
    static String printable(String name) {
        StringBuilder out = null;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
                if (out == null) {
                    out = new StringBuilder(name.length() + 8).append(name, 0, i);
                }
                out.append(String.format("\\x%02x", (int) c & 0xff));
            } else if (out != null) {
                out.append(c);
            }
        }
        return out == null ? name : out.toString();
    }

    private SandboxTimeoutException timeoutError(String what) {
        return new SandboxTimeoutException(what, limits.timeout().plus(GUARD));
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }

    /**
     * Destroys the session of {@linkplain #lazy lazy} tools, if one was created; a session given to {@link
     * #of(SandboxSession, ToolLimits)} is left alone. Later calls fail with {@link SandboxStateException}.
     *
     * @return completes when the session is destroyed
     */
    public Mono<Void> closeAsync() {
        if (!closed.compareAndSet(false, true) || given != null) {
            return Mono.empty();
        }
        SandboxSession s = created.getAndSet(null);
        return s == null ? Mono.empty() : s.destroy();
    }

    /**
     * Closes as {@link #closeAsync()} does, waiting at most 30 seconds. Not for a non-blocking thread: use {@link
     * #closeAsync()} there.
     */
    @Override
    public void close() {
        closeAsync().block(GUARD);
    }

    /** One output stream's head, at most {@code cap} bytes of it, and how many bytes the stream had in all. */
    static final class Capture {
        private final int cap;
        private final StringBuilder text = new StringBuilder();
        private int kept;
        private long total;

        Capture(int cap) {
            this.cap = cap;
        }

        void add(ExecEvent.Line line) {
            total = Math.max(total, line.nextOffset());
            if (kept >= cap) {
                return;
            }
            String piece = line.partial() ? line.text() : line.text() + "\n";
            byte[] bytes = piece.getBytes(StandardCharsets.UTF_8);
            int room = cap - kept;
            if (bytes.length <= room) {
                text.append(piece);
                kept += bytes.length;
            } else {
                int cut = boundary(bytes, room);
                text.append(new String(bytes, 0, cut, StandardCharsets.UTF_8));
                kept = cap;
            }
        }

        void appendTo(StringBuilder answer, String name) {
            if (total == 0 && text.isEmpty()) {
                answer.append(name).append(": (empty)\n");
                return;
            }
            answer.append(name).append(":\n").append(text);
            if (!text.isEmpty() && text.charAt(text.length() - 1) != '\n') {
                answer.append('\n');
            }
            long shown = text.toString().getBytes(StandardCharsets.UTF_8).length;
            if (total > shown) {
                answer.append('[')
                        .append(name)
                        .append(" truncated: the first ")
                        .append(shown)
                        .append(" of ")
                        .append(total)
                        .append(" bytes are shown]\n");
            }
        }

        /**
         * The largest length {@code <= limit} (and {@code <= bytes.length}) that does not end inside a UTF-8
         * sequence: a sequence whose lead byte is before the cut but which needs bytes after it is left out whole.
         */
        static int boundary(byte[] bytes, int limit) {
            int cut = Math.min(limit, bytes.length);
            int lead = cut - 1;
            while (lead >= 0 && lead > cut - 4 && (bytes[lead] & 0xC0) == 0x80) {
                lead--;
            }
            if (lead < 0) {
                return cut;
            }
            int b = bytes[lead] & 0xFF;
            int needed = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
            return lead + needed > cut ? lead : cut;
        }
    }
}
