package dev.sandbox.implementation.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.sandbox.BackgroundOptions;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.PtyOptions;
import dev.sandbox.SessionOptions;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The bodies the client sends and the server reads: command, PTY and session options, and the small control bodies
 * (durations, acknowledgements, signals, sizes, paths). Each is a record whose components are the JSON fields, bound by
 * {@link WireJson}: the client writes {@code of(...)}, the server reads it back with {@link #read}, which fails with
 * an {@link InvalidArgumentException} naming the field and the value that are wrong (answered 400).
 *
 * <p>Durations are whole milliseconds in fields named {@code ...Ms}, rounded up so a positive duration stays
 * positive.
 */
public final class RequestBodies {
    private RequestBodies() {}

    /**
     * Reads a request body into its record.
     *
     * @param json the parsed body
     * @param type the record
     * @param <T> its type
     * @return the record
     * @throws InvalidArgumentException naming the field and the value that do not fit
     */
    public static <T extends Record> T read(JsonNode json, Class<T> type) {
        return WireJson.bind(json, type);
    }

    /**
     * Makes the JSON binding of every request record ahead of the first request: made lazily, the binding takes a lock
     * that two first requests at once contend for, which parks a server's event loop.
     */
    public static void prepare() {
        for (Class<?> type : RequestBodies.class.getDeclaredClasses()) {
            if (type.isRecord()) {
                WireJson.prepare(type);
            }
        }
    }

    private static Map<String, String> orNull(Map<String, String> m) {
        return m.isEmpty() ? null : m;
    }

    private static List<String> requiredArgv(List<String> argv) {
        if (argv == null) {
            throw new InvalidArgumentException("argv", "argv must be an array of strings, got nothing");
        }
        return WireJson.noNulls("argv", argv);
    }

    /**
     * The body of {@code run}, {@code exec} and {@code processes}: exec options, the upload that feeds stdin, the
     * client's exec id (streams) and background options (processes).
     *
     * <pre>{@code
     * {"argv":["ls"],"cwd":"/tmp","env":{"A":"1"},"timeoutMs":1000,"idleTimeoutMs":500,"charset":"ISO-8859-1",
     *  "maxLineLength":65536,"maxOutputBytes":1048576,"stdinId":"...","id":"...",
     *  "ringBytes":65536,"overflow":"THROTTLE","partialLineDelayMs":50,"byteOutput":true}
     * }</pre>
     *
     * @param argv the command
     * @param cwd its working directory, or {@code null}
     * @param env its extra environment, {@code null} when empty
     * @param timeoutMs its timeout, or {@code null}
     * @param idleTimeoutMs its idle timeout, or {@code null}
     * @param charset its charset, {@code null} for UTF-8
     * @param maxLineLength the longest line, or {@code null} for the default
     * @param maxOutputBytes what {@code run} keeps per stream, or {@code null} for the default
     * @param stdinId the upload that feeds stdin, or {@code null} for none
     * @param id the client's exec id (streams), or {@code null}
     * @param ringBytes the output ring (background processes), or {@code null} for the default
     * @param overflow what a full ring does (background processes), or {@code null} for the default
     * @param partialLineDelayMs the quiet interval before a line without its end is delivered as partial, in
     *     milliseconds (a positive delay under one millisecond is sent as 1), or {@code null} for the default
     * @param byteOutput whether output comes as raw chunks, or {@code null} for lines
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ExecBody(
            @JsonSetter(nulls = Nulls.FAIL) List<String> argv,
            String cwd,
            Map<String, String> env,
            Long timeoutMs,
            Long idleTimeoutMs,
            String charset,
            Long maxLineLength,
            Long maxOutputBytes,
            String stdinId,
            String id,
            Long ringBytes,
            BackgroundOptions.Overflow overflow,
            Long partialLineDelayMs,
            Boolean byteOutput) {

        /**
         * Encodes exec options; the stdin publisher travels separately, named by {@code stdinId}.
         *
         * @param o the options
         * @param stdinId the id of the stdin upload, or {@code null} for none
         * @return the body
         */
        public static ExecBody of(ExecOptions o, String stdinId) {
            return new ExecBody(
                    o.argv(),
                    o.cwd().orElse(null),
                    orNull(o.env()),
                    o.timeout().map(WireJson::millis).orElse(null),
                    o.idleTimeout().map(WireJson::millis).orElse(null),
                    o.charset().equals(StandardCharsets.UTF_8)
                            ? null
                            : o.charset().name(),
                    (long) o.maxLineLength(),
                    o.maxOutputBytes(),
                    stdinId,
                    null,
                    null,
                    null,
                    o.partialLineDelay().equals(ExecOptions.DEFAULT_PARTIAL_LINE_DELAY)
                            ? null
                            : delayMillis(o.partialLineDelay()),
                    o.byteOutput() ? Boolean.TRUE : null);
        }

        private static long delayMillis(Duration d) {
            // a delay this JVM accepted is at most an hour; a positive one under a millisecond must not become zero
            long ms = d.toMillis();
            return ms == 0 && !d.isZero() ? 1 : ms;
        }

        /**
         * The same body naming the exec, for a stream.
         *
         * @param execId the client's exec id
         * @return the body
         */
        public ExecBody withId(String execId) {
            return new ExecBody(
                    argv,
                    cwd,
                    env,
                    timeoutMs,
                    idleTimeoutMs,
                    charset,
                    maxLineLength,
                    maxOutputBytes,
                    stdinId,
                    execId,
                    ringBytes,
                    overflow,
                    partialLineDelayMs,
                    byteOutput);
        }

        /**
         * The same body with background options, to start a process.
         *
         * @param b the options
         * @return the body
         */
        public ExecBody withBackground(BackgroundOptions b) {
            return new ExecBody(
                    argv,
                    cwd,
                    env,
                    timeoutMs,
                    idleTimeoutMs,
                    charset,
                    maxLineLength,
                    maxOutputBytes,
                    stdinId,
                    id,
                    (long) b.ringBytes(),
                    b.overflow(),
                    partialLineDelayMs,
                    byteOutput);
        }

        /**
         * The exec options (without stdin), validated.
         *
         * @return the options
         * @throws InvalidArgumentException naming the field that is wrong
         */
        public ExecOptions options() {
            WireJson.checkArgvEnvSize(argv, env, "env");
            ExecOptions o = ExecOptions.of(requiredArgv(argv));
            if (cwd != null) {
                o = o.withCwd(cwd);
            }
            o = o.withEnv(WireJson.noNulls("env", env));
            o = o.withTimeout(WireJson.durationMs("timeoutMs", timeoutMs));
            o = o.withIdleTimeout(WireJson.durationMs("idleTimeoutMs", idleTimeoutMs));
            if (charset != null) {
                try {
                    o = o.withCharset(Charset.forName(charset));
                } catch (IllegalArgumentException e) {
                    throw new InvalidArgumentException("charset", "charset is not supported: '" + charset + "'");
                }
            }
            long maxLine = maxLineLength == null ? ExecOptions.DEFAULT_MAX_LINE_LENGTH : maxLineLength;
            if (maxLine > Integer.MAX_VALUE || maxLine < Integer.MIN_VALUE) { // a narrowing cast would wrap
                throw new InvalidArgumentException("maxLineLength", "maxLineLength is too large: " + maxLine);
            }
            o = o.withMaxLineLength((int) maxLine);
            o = o.withMaxOutputBytes(maxOutputBytes == null ? ExecOptions.DEFAULT_MAX_OUTPUT_BYTES : maxOutputBytes);
            if (partialLineDelayMs != null) {
                long max = ExecOptions.MAX_PARTIAL_LINE_DELAY.toMillis();
                if (partialLineDelayMs < 0 || partialLineDelayMs > max) {
                    throw new InvalidArgumentException(
                            "partialLineDelay",
                            "partialLineDelay must be from 0 to " + ExecOptions.MAX_PARTIAL_LINE_DELAY + ", got "
                                    + Duration.ofMillis(partialLineDelayMs));
                }
                o = o.withPartialLineDelay(Duration.ofMillis(partialLineDelayMs));
            }
            o = o.withByteOutput(Boolean.TRUE.equals(byteOutput));
            return o.validate();
        }

        /**
         * The background options, validated.
         *
         * @return the options
         * @throws InvalidArgumentException naming the field that is wrong
         */
        public BackgroundOptions background() {
            long ring = ringBytes == null ? BackgroundOptions.DEFAULT_RING_BYTES : ringBytes;
            if (ring > Integer.MAX_VALUE || ring < Integer.MIN_VALUE) {
                throw new InvalidArgumentException("ringBytes", "ringBytes is too large: " + ring);
            }
            return BackgroundOptions.defaults()
                    .withRingBytes((int) ring)
                    .withOverflow(overflow == null ? BackgroundOptions.Overflow.DROP_OLDEST : overflow)
                    .validate();
        }
    }

    /**
     * The body of {@code POST .../ptys}: {@code {"argv", "cwd"?, "env"?, "cols", "rows", "replayBytes"}}.
     *
     * @param argv the command
     * @param cwd its working directory, or {@code null}
     * @param env its extra environment, {@code null} when empty
     * @param cols the terminal's columns, or {@code null} for 80
     * @param rows its rows, or {@code null} for 24
     * @param replayBytes the output kept for a client that attaches, or {@code null} for the default
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PtyBody(
            @JsonSetter(nulls = Nulls.FAIL) List<String> argv,
            String cwd,
            Map<String, String> env,
            Integer cols,
            Integer rows,
            Integer replayBytes) {

        /**
         * Encodes PTY options.
         *
         * @param o the options
         * @return the body
         */
        public static PtyBody of(PtyOptions o) {
            return new PtyBody(o.argv(), o.cwd().orElse(null), orNull(o.env()), o.cols(), o.rows(), o.replayBytes());
        }

        /**
         * The PTY options, validated.
         *
         * @return the options
         * @throws InvalidArgumentException naming the field that is wrong
         */
        public PtyOptions options() {
            WireJson.checkArgvEnvSize(argv, env, "env");
            PtyOptions o = PtyOptions.of(requiredArgv(argv).toArray(String[]::new))
                    .withSize(cols == null ? 80 : cols, rows == null ? 24 : rows)
                    .withReplayBytes(replayBytes == null ? PtyOptions.DEFAULT_REPLAY_BYTES : replayBytes);
            if (cwd != null) {
                o = o.withCwd(cwd);
            }
            for (Map.Entry<String, String> e : WireJson.noNulls("env", env).entrySet()) {
                o = o.withEnv(e.getKey(), e.getValue());
            }
            o.toExecOptions(); // validates
            return o;
        }
    }

    /**
     * The body of {@code POST /v1/sessions}. Secrets are included (the channel is the caller's to protect) but never
     * logged. {@code lifetimeMs} is a number for a chosen lifetime, {@code null} for an unlimited one, and absent for
     * the default lifetime (a session the server then leases to its client, see {@link
     * dev.sandbox.SessionOptions#lifetimeChosen()}); it is read as a tree to tell the three apart.
     *
     * @param workdir the workdir, or {@code null} for the provider's
     * @param env the session's environment
     * @param secrets its secrets
     * @param labels its labels
     * @param lifetimeMs a whole number, {@code null} (a JSON null: unlimited), or absent (Java {@code null}: default)
     * @param idleTimeoutMs the idle timeout, or {@code null} for none
     * @param name the session's name, or {@code null} (absent) for an unnamed session
     * @param network the network policy, or {@code null} (absent) for none
     * @param autoResume {@code false} for a session whose calls do not resume it when paused; {@code null} (absent) for
     *     the default, on
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record SessionBody(
            String workdir,
            Map<String, String> env,
            Map<String, String> secrets,
            Map<String, String> labels,
            JsonNode lifetimeMs,
            Long idleTimeoutMs,
            String name,
            NetworkBodies.PolicyBody network,
            Boolean autoResume) {

        /**
         * Encodes session options.
         *
         * @param o the options
         * @return the body
         */
        public static SessionBody of(SessionOptions o) {
            return new SessionBody(
                    o.workdir().orElse(null),
                    o.env(),
                    o.secrets(),
                    o.labels(),
                    // a lifetime left at the default is not written, so the server, too, leases the session
                    !o.lifetimeChosen() && o.lifetime().isPresent()
                            ? null
                            : o.lifetime()
                                    .<JsonNode>map(d -> LongNode.valueOf(WireJson.millis(d)))
                                    .orElse(NullNode.getInstance()),
                    o.idleTimeout().map(WireJson::millis).orElse(null),
                    o.name().orElse(null),
                    o.network().mode() == NetworkPolicy.Mode.NONE ? null : NetworkBodies.PolicyBody.of(o.network()),
                    // written only when off: the default is on
                    o.autoResume() ? null : Boolean.FALSE);
        }

        /** Names the secrets, never their values (the policy's headers likewise). */
        @Override
        public String toString() {
            return "SessionBody[workdir=" + workdir + ", env=" + env + ", secrets="
                    + (secrets == null ? null : secrets.keySet()) + ", labels=" + labels + ", lifetimeMs=" + lifetimeMs
                    + ", idleTimeoutMs=" + idleTimeoutMs + ", name=" + name + ", network=" + network + ", autoResume="
                    + autoResume + "]";
        }

        /**
         * The session options, validated: a missing {@code lifetimeMs} means the default lifetime, {@code null} none.
         *
         * @return the options
         * @throws InvalidArgumentException naming the field that is wrong
         */
        public SessionOptions options() {
            Map<String, String> all = new java.util.HashMap<>();
            if (env != null) {
                env.forEach((k, v) -> all.put("env:" + k, v));
            }
            WireJson.checkArgvEnvSize(null, all, "env");
            if (secrets != null) {
                secrets.forEach((k, v) -> all.put("secret:" + k, v));
            }
            WireJson.checkArgvEnvSize(null, all, "secrets");
            SessionOptions o = SessionOptions.defaults();
            if (workdir != null) {
                o = o.withWorkdir(workdir);
            }
            o = o.withEnv(WireJson.noNulls("env", env));
            for (Map.Entry<String, String> e :
                    WireJson.noNulls("secrets", secrets).entrySet()) {
                o = o.withSecret(e.getKey(), e.getValue());
            }
            for (Map.Entry<String, String> e :
                    WireJson.noNulls("labels", labels).entrySet()) {
                o = o.withLabel(e.getKey(), e.getValue());
            }
            if (lifetimeMs != null) {
                if (lifetimeMs.isNull()) {
                    o = o.withUnlimitedLifetime();
                } else if (lifetimeMs.isIntegralNumber() && lifetimeMs.canConvertToLong()) {
                    o = o.withLifetime(WireJson.durationMs("lifetimeMs", lifetimeMs.asLong()));
                } else {
                    throw new InvalidArgumentException(
                            "lifetimeMs", "lifetimeMs must be a whole number of milliseconds, got " + lifetimeMs);
                }
            }
            if (idleTimeoutMs != null) {
                o = o.withIdleTimeout(WireJson.durationMs("idleTimeoutMs", idleTimeoutMs));
            }
            if (name != null) {
                o = o.withName(name);
            }
            if (network != null) {
                o = o.withNetwork(network.policy());
            }
            if (autoResume != null) {
                o = o.withAutoResume(autoResume);
            }
            return o.validate();
        }
    }

    /**
     * A {@code {"ms": N}} body: a session's new lifetime or idle timeout.
     *
     * @param ms the duration in milliseconds
     */
    public record DurationBody(Long ms) {
        /**
         * Encodes a duration.
         *
         * @param d the duration
         * @return the body
         */
        public static DurationBody of(Duration d) {
            return new DurationBody(WireJson.millis(d));
        }

        /**
         * The duration, which must be there and positive.
         *
         * @param field the setting it is, for errors ({@code lifetime})
         * @return the duration
         * @throws InvalidArgumentException naming the setting
         */
        public Duration duration(String field) {
            if (ms == null) {
                throw new InvalidArgumentException(field, field + " is required as {\"ms\": N}");
            }
            Duration d = WireJson.durationMs(field, ms);
            if (d.isZero() || d.isNegative()) {
                throw new InvalidArgumentException(field, field + " must be positive, got " + d);
            }
            return d;
        }
    }

    /**
     * What an exec stream's client has delivered: {@code {"stdout": N, "stderr": M}}, the offsets of the last line
     * delivered on each stream.
     *
     * @param stdout the last stdout line's offset, -1 for none
     * @param stderr the last stderr line's offset, -1 for none
     */
    public record AckBody(Long stdout, Long stderr) {
        /**
         * The stdout offset.
         *
         * @return the offset, -1 when absent
         */
        public long stdoutOffset() {
            return stdout == null ? -1 : stdout;
        }

        /**
         * The stderr offset.
         *
         * @return the offset, -1 when absent
         */
        public long stderrOffset() {
            return stderr == null ? -1 : stderr;
        }
    }

    /**
     * A signal for a process or a PTY: {@code {"signal": 15}}.
     *
     * @param signal the signal number
     */
    public record SignalBody(Long signal) {
        /**
         * The signal, which must be there.
         *
         * @return the number (the process checks its range)
         * @throws InvalidArgumentException naming {@code signal}
         */
        public int number() {
            if (signal == null || signal < Integer.MIN_VALUE || signal > Integer.MAX_VALUE) {
                throw new InvalidArgumentException("signal", "signal must be a number from 1 to 64, got " + signal);
            }
            return signal.intValue();
        }
    }

    /**
     * A terminal size: {@code {"cols": 120, "rows": 40}}.
     *
     * @param cols the columns
     * @param rows the rows
     */
    public record ResizeBody(Integer cols, Integer rows) {
        /**
         * The columns.
         *
         * @return the columns, 0 when absent (which the PTY refuses naming {@code cols})
         */
        public int colsOrZero() {
            return cols == null ? 0 : cols;
        }

        /**
         * The rows.
         *
         * @return the rows, 0 when absent
         */
        public int rowsOrZero() {
            return rows == null ? 0 : rows;
        }
    }

    /**
     * A control message on a PTY's WebSocket: {@code {"type":"resize","cols":120,"rows":40}} or {@code
     * {"type":"signal","signal":2}}.
     *
     * @param type {@code resize} or {@code signal}
     * @param cols the columns of a resize
     * @param rows the rows of a resize
     * @param signal the signal number
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PtyControl(String type, Integer cols, Integer rows, Integer signal) {}

    /**
     * The directory of {@code files/mkdir}: {@code {"path": "a/b"}}.
     *
     * @param path the path
     */
    public record PathBody(String path) {}

    /**
     * The paths of {@code files/move}: {@code {"from": "a", "to": "b"}}.
     *
     * @param from the source
     * @param to the target
     */
    public record MoveBody(String from, String to) {}

    /**
     * The files of {@code files/batch}: {@code {"files":[{"path":"a.txt","content":"<base64>"},...]}}, written in
     * this order.
     *
     * @param files the files
     */
    public record BatchBody(List<BatchFile> files) {
        /**
         * The files.
         *
         * @return the files, empty when absent
         */
        @Override
        public List<BatchFile> files() {
            return files == null ? List.of() : files;
        }
    }

    /**
     * One file of a {@link BatchBody}.
     *
     * @param path where to write it
     * @param content its bytes (base64 in JSON)
     */
    public record BatchFile(String path, byte[] content) {}
}
