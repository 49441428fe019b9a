package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.BackendException;
import dev.sandbox.BackgroundOptions;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.PtyOptions;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionStatus;
import dev.sandbox.UnsupportedFeatureException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The JSON wire format shared by the sandbox server and the remote provider: one place that turns SDK types into
 * JSON and back, including errors. The format is described in {@code sandbox-server/README.md}; durations travel as
 * whole milliseconds (rounded up, so a positive duration stays positive) except exec durations (nanoseconds), instants
 * as ISO-8601 strings.
 */
public final class Wire {
    /** The shared mapper: trees only, no data binding. */
    public static final ObjectMapper JSON = new ObjectMapper();

    private static final JsonFactory FACTORY = JSON.getFactory();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** Content type of newline-delimited JSON streams. */
    public static final String NDJSON = "application/x-ndjson";

    /** Content type of server-sent events. */
    public static final String EVENT_STREAM = "text/event-stream";

    /** Content type of JSON bodies. */
    public static final String APPLICATION_JSON = "application/json";

    /** Content type of raw bytes. */
    public static final String OCTET_STREAM = "application/octet-stream";

    /** Response header of a streaming exec: the unacknowledged bytes the server keeps for a resume. */
    public static final String ACK_WINDOW_HEADER = "Sandbox-Ack-Window";

    /**
     * Request header of exec streams: {@value #BATCH_LINES} asks the server to send runs of whole lines as {@code
     * lines} frames (see {@link LineBatch}) instead of one event per line.
     */
    public static final String BATCH_HEADER = "Sandbox-Batch";

    /** The value of {@link #BATCH_HEADER} that asks for {@code lines} frames. */
    public static final String BATCH_LINES = "lines";

    /** The heartbeat line of NDJSON streams. */
    public static final byte[] HEARTBEAT = "{\"type\":\"heartbeat\"}".getBytes(StandardCharsets.US_ASCII);

    private static final byte[] STDOUT_PREFIX = "{\"type\":\"stdout\",\"offset\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STDERR_PREFIX = "{\"type\":\"stderr\",\"offset\":".getBytes(StandardCharsets.US_ASCII);
    static final byte[] NEXT = ",\"next\":".getBytes(StandardCharsets.US_ASCII);
    static final byte[] TEXT = ",\"text\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PARTIAL_END = "\",\"partial\":true}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\"}".getBytes(StandardCharsets.US_ASCII);

    private Wire() {}

    // ------------------------------------------------------------------ durations and instants

    /**
     * A duration as whole milliseconds, rounded up.
     *
     * @param d a duration or {@code null}
     * @return the milliseconds, or {@code null}
     */
    public static Long millis(Duration d) {
        if (d == null) {
            return null;
        }
        long ms = d.toMillis();
        return d.minusMillis(ms).isZero() ? ms : ms + 1;
    }

    private static Duration duration(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber()) {
            throw new InvalidArgumentException(field, field + " must be a whole number of milliseconds, got " + v);
        }
        return Duration.ofMillis(v.asLong());
    }

    private static String instant(Instant i) {
        return i == null ? null : i.toString();
    }

    private static Instant instant(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        try {
            return Instant.parse(v.asText());
        } catch (DateTimeParseException e) {
            throw new InvalidArgumentException(field, field + " must be an ISO-8601 instant, got " + v);
        }
    }

    // ------------------------------------------------------------------ reading helpers (server side: typed errors)

    /**
     * Parses a JSON document.
     *
     * @param bytes the document
     * @return the tree
     * @throws MalformedJsonException when the bytes are not JSON
     */
    public static JsonNode parse(byte[] bytes) {
        try {
            JsonNode n = JSON.readTree(bytes);
            if (n == null || n.isMissingNode()) {
                throw new MalformedJsonException("the request body is empty; a JSON object was expected");
            }
            return n;
        } catch (IOException e) {
            throw new MalformedJsonException("the request body is not valid JSON: " + firstLine(e.getMessage()));
        }
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** A request body that is not the JSON it should be. */
    public static final class MalformedJsonException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /**
         * Creates the exception.
         *
         * @param message what is wrong
         */
        public MalformedJsonException(String message) {
            super(message);
        }
    }

    private static ObjectNode object(JsonNode n, String what) {
        if (!(n instanceof ObjectNode o)) {
            throw new InvalidArgumentException(what, what + " must be a JSON object, got " + kind(n));
        }
        return o;
    }

    private static String kind(JsonNode n) {
        return n == null ? "nothing" : n.getNodeType().name().toLowerCase(Locale.ROOT);
    }

    private static String text(JsonNode n, String field, boolean required) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            if (required) {
                throw new InvalidArgumentException(field, field + " is required");
            }
            return null;
        }
        if (!v.isTextual()) {
            throw new InvalidArgumentException(field, field + " must be a string, got " + kind(v));
        }
        return v.asText();
    }

    private static long longValue(JsonNode n, String field, long dflt) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new InvalidArgumentException(field, field + " must be a whole number, got " + v);
        }
        return v.asLong();
    }

    private static boolean bool(JsonNode n, String field, boolean dflt) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isBoolean()) {
            throw new InvalidArgumentException(field, field + " must be true or false, got " + v);
        }
        return v.asBoolean();
    }

    private static Map<String, String> stringMap(JsonNode n, String field) {
        JsonNode v = n.get(field);
        Map<String, String> out = new LinkedHashMap<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isObject()) {
            throw new InvalidArgumentException(field, field + " must be an object of strings, got " + kind(v));
        }
        for (Map.Entry<String, JsonNode> e : v.properties()) {
            if (!e.getValue().isTextual()) {
                throw new InvalidArgumentException(
                        field + "[" + e.getKey() + "]",
                        field + "[" + e.getKey() + "] must be a string, got " + kind(e.getValue()));
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    private static ObjectNode map(Map<String, String> m) {
        ObjectNode o = NODES.objectNode();
        m.forEach(o::put);
        return o;
    }

    private static <E extends Enum<E>> E enumValue(JsonNode n, String field, Class<E> type, E dflt) {
        String s = text(n, field, dflt == null);
        if (s == null) {
            return dflt;
        }
        try {
            return Enum.valueOf(type, s);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgumentException(field, field + " has an unknown value: '" + s + "'");
        }
    }

    // ------------------------------------------------------------------ options

    /**
     * Encodes exec options; the stdin publisher travels separately, named by {@code stdinId}.
     *
     * @param o the options
     * @param stdinId the id of the stdin upload, or {@code null} for none
     * @return the JSON object
     */
    public static ObjectNode execOptions(ExecOptions o, String stdinId) {
        ObjectNode n = NODES.objectNode();
        ArrayNode argv = n.putArray("argv");
        o.argv().forEach(argv::add);
        o.cwd().ifPresent(c -> n.put("cwd", c));
        if (!o.env().isEmpty()) {
            n.set("env", map(o.env()));
        }
        o.timeout().ifPresent(t -> n.put("timeoutMs", millis(t)));
        o.idleTimeout().ifPresent(t -> n.put("idleTimeoutMs", millis(t)));
        if (!o.charset().equals(StandardCharsets.UTF_8)) {
            n.put("charset", o.charset().name());
        }
        n.put("maxLineLength", o.maxLineLength());
        n.put("maxOutputBytes", o.maxOutputBytes());
        if (stdinId != null) {
            n.put("stdinId", stdinId);
        }
        return n;
    }

    /**
     * Decodes exec options (without stdin) and validates them.
     *
     * @param json the JSON object
     * @return validated options
     * @throws InvalidArgumentException naming the field that is wrong
     */
    public static ExecOptions execOptions(JsonNode json) {
        ObjectNode n = object(json, "body");
        JsonNode argvNode = n.get("argv");
        if (argvNode == null || !argvNode.isArray()) {
            throw new InvalidArgumentException("argv", "argv must be an array of strings, got " + kind(argvNode));
        }
        List<String> argv = new ArrayList<>();
        for (int i = 0; i < argvNode.size(); i++) {
            JsonNode a = argvNode.get(i);
            if (!a.isTextual()) {
                throw new InvalidArgumentException(
                        "argv[" + i + "]", "argv[" + i + "] must be a string, got " + kind(a));
            }
            argv.add(a.asText());
        }
        ExecOptions o = ExecOptions.of(argv);
        String cwd = text(n, "cwd", false);
        if (cwd != null) {
            o = o.withCwd(cwd);
        }
        o = o.withEnv(stringMap(n, "env"));
        o = o.withTimeout(duration(n, "timeoutMs"));
        o = o.withIdleTimeout(duration(n, "idleTimeoutMs"));
        String charset = text(n, "charset", false);
        if (charset != null) {
            try {
                o = o.withCharset(Charset.forName(charset));
            } catch (IllegalArgumentException e) {
                throw new InvalidArgumentException("charset", "charset is not supported: '" + charset + "'");
            }
        }
        long maxLine = longValue(n, "maxLineLength", ExecOptions.DEFAULT_MAX_LINE_LENGTH);
        if (maxLine > Integer.MAX_VALUE || maxLine < Integer.MIN_VALUE) {
            throw new InvalidArgumentException("maxLineLength", "maxLineLength is too large: " + maxLine);
        }
        o = o.withMaxLineLength((int) maxLine);
        o = o.withMaxOutputBytes(longValue(n, "maxOutputBytes", ExecOptions.DEFAULT_MAX_OUTPUT_BYTES));
        return o.validate();
    }

    /**
     * Encodes PTY options: {@code {"argv", "cwd"?, "env"?, "cols", "rows", "replayBytes"}}.
     *
     * @param o the options
     * @return the JSON object
     */
    public static ObjectNode ptyOptions(PtyOptions o) {
        ObjectNode n = NODES.objectNode();
        ArrayNode argv = n.putArray("argv");
        o.argv().forEach(argv::add);
        o.cwd().ifPresent(c -> n.put("cwd", c));
        if (!o.env().isEmpty()) {
            n.set("env", map(o.env()));
        }
        n.put("cols", o.cols());
        n.put("rows", o.rows());
        n.put("replayBytes", o.replayBytes());
        return n;
    }

    /**
     * Decodes PTY options and validates them.
     *
     * @param json the JSON object
     * @return validated options
     * @throws InvalidArgumentException naming the field that is wrong
     */
    public static PtyOptions ptyOptions(JsonNode json) {
        ObjectNode n = object(json, "body");
        JsonNode argvNode = n.get("argv");
        if (argvNode == null || !argvNode.isArray()) {
            throw new InvalidArgumentException("argv", "argv must be an array of strings, got " + kind(argvNode));
        }
        String[] argv = new String[argvNode.size()];
        for (int i = 0; i < argvNode.size(); i++) {
            JsonNode a = argvNode.get(i);
            if (!a.isTextual()) {
                throw new InvalidArgumentException(
                        "argv[" + i + "]", "argv[" + i + "] must be a string, got " + kind(a));
            }
            argv[i] = a.asText();
        }
        PtyOptions o = PtyOptions.of(argv)
                .withSize(intValue(n, "cols", 80), intValue(n, "rows", 24))
                .withReplayBytes(intValue(n, "replayBytes", PtyOptions.DEFAULT_REPLAY_BYTES));
        String cwd = text(n, "cwd", false);
        if (cwd != null) {
            o = o.withCwd(cwd);
        }
        for (Map.Entry<String, String> e : stringMap(n, "env").entrySet()) {
            o = o.withEnv(e.getKey(), e.getValue());
        }
        o.toExecOptions(); // validates
        return o;
    }

    /**
     * Reads a whole-number field that must fit an {@code int}.
     *
     * @param n the object
     * @param field the field
     * @param dflt the value when absent
     * @return the value
     * @throws InvalidArgumentException naming the field when it is not a whole number in range
     */
    public static int intValue(JsonNode n, String field, int dflt) {
        JsonNode v = n == null ? null : n.get(field);
        if (v == null || v.isNull()) {
            return dflt;
        }
        if (!v.isIntegralNumber() || !v.canConvertToInt()) {
            throw new InvalidArgumentException(field, field + " must be a whole number, got " + v);
        }
        return v.asInt();
    }

    /**
     * Encodes what the server says of a PTY: {@code {"id", "pid", "running", "exitCode"?}}.
     *
     * @param id the PTY's id
     * @param pid its pid, or -1
     * @param exit its exit, or {@code null} while it runs
     * @return the JSON object
     */
    public static ObjectNode ptyInfo(String id, long pid, ExecEvent.Exit exit) {
        ObjectNode n = NODES.objectNode();
        n.put("id", id);
        n.put("pid", pid);
        n.put("running", exit == null);
        if (exit != null) {
            n.put("exitCode", exit.code());
        }
        return n;
    }

    /**
     * The stdin upload id of an exec request, if any.
     *
     * @param json the request
     * @return the id or {@code null}
     */
    public static String stdinId(JsonNode json) {
        return text(json, "stdinId", false);
    }

    /**
     * Encodes background options into an exec request.
     *
     * @param n the exec request
     * @param b the options
     * @return the request
     */
    public static ObjectNode backgroundOptions(ObjectNode n, BackgroundOptions b) {
        n.put("ringBytes", b.ringBytes());
        n.put("overflow", b.overflow().name());
        return n;
    }

    /**
     * Decodes background options from an exec request.
     *
     * @param n the request
     * @return validated options
     */
    public static BackgroundOptions backgroundOptions(JsonNode n) {
        long ring = longValue(n, "ringBytes", BackgroundOptions.DEFAULT_RING_BYTES);
        if (ring > Integer.MAX_VALUE) {
            throw new InvalidArgumentException("ringBytes", "ringBytes is too large: " + ring);
        }
        return BackgroundOptions.defaults()
                .withRingBytes((int) ring)
                .withOverflow(enumValue(
                        n, "overflow", BackgroundOptions.Overflow.class, BackgroundOptions.Overflow.DROP_OLDEST))
                .validate();
    }

    /**
     * Encodes session options; secrets are included (the channel is the caller's to protect) but never logged.
     *
     * @param o the options
     * @return the JSON object
     */
    public static ObjectNode sessionOptions(SessionOptions o) {
        ObjectNode n = NODES.objectNode();
        o.workdir().ifPresent(w -> n.put("workdir", w));
        n.set("env", map(o.env()));
        n.set("secrets", map(o.secrets()));
        n.set("labels", map(o.labels()));
        if (o.lifetime().isPresent()) {
            n.put("lifetimeMs", millis(o.lifetime().get()));
        } else {
            n.putNull("lifetimeMs");
        }
        o.idleTimeout().ifPresent(t -> n.put("idleTimeoutMs", millis(t)));
        return n;
    }

    /**
     * Decodes session options: a missing {@code lifetimeMs} means the default lifetime, {@code null} means none.
     *
     * @param json the JSON object
     * @return validated options
     */
    public static SessionOptions sessionOptions(JsonNode json) {
        ObjectNode n = object(json, "body");
        SessionOptions o = SessionOptions.defaults();
        String workdir = text(n, "workdir", false);
        if (workdir != null) {
            o = o.withWorkdir(workdir);
        }
        o = o.withEnv(stringMap(n, "env"));
        for (Map.Entry<String, String> e : stringMap(n, "secrets").entrySet()) {
            o = o.withSecret(e.getKey(), e.getValue());
        }
        for (Map.Entry<String, String> e : stringMap(n, "labels").entrySet()) {
            o = o.withLabel(e.getKey(), e.getValue());
        }
        if (n.has("lifetimeMs")) {
            Duration lifetime = duration(n, "lifetimeMs");
            o = lifetime == null ? o.withUnlimitedLifetime() : o.withLifetime(lifetime);
        }
        Duration idle = duration(n, "idleTimeoutMs");
        if (idle != null) {
            o = o.withIdleTimeout(idle);
        }
        return o.validate();
    }

    /**
     * Decodes a {@code {"ms": N}} body.
     *
     * @param json the body
     * @param field the field name for errors
     * @return the duration
     */
    public static Duration durationBody(JsonNode json, String field) {
        ObjectNode n = object(json, "body");
        Duration d = duration(n, "ms");
        if (d == null) {
            throw new InvalidArgumentException(field, field + " is required as {\"ms\": N}");
        }
        if (d.isZero() || d.isNegative()) {
            throw new InvalidArgumentException(field, field + " must be positive, got " + d);
        }
        return d;
    }

    /**
     * Encodes a {@code {"ms": N}} body.
     *
     * @param d the duration
     * @return the body
     */
    public static ObjectNode durationBody(Duration d) {
        return NODES.objectNode().put("ms", millis(d));
    }

    // ------------------------------------------------------------------ results

    /**
     * Encodes an exec result.
     *
     * @param r the result
     * @return the JSON object
     */
    public static ObjectNode execResult(ExecResult r) {
        ObjectNode n = NODES.objectNode();
        n.put("exitCode", r.exitCode());
        n.put("stdout", r.stdout());
        n.put("stderr", r.stderr());
        n.put("stdoutTruncated", r.stdoutTruncated());
        n.put("stderrTruncated", r.stderrTruncated());
        n.put("stdoutBytes", r.stdoutBytes());
        n.put("stderrBytes", r.stderrBytes());
        n.put("termination", r.termination().name());
        n.put("durationNanos", r.duration().toNanos());
        return n;
    }

    /**
     * Decodes an exec result.
     *
     * @param n the JSON object
     * @return the result
     */
    public static ExecResult execResult(JsonNode n) {
        return new ExecResult(
                n.path("exitCode").asInt(),
                n.path("stdout").asText(),
                n.path("stderr").asText(),
                n.path("stdoutTruncated").asBoolean(),
                n.path("stderrTruncated").asBoolean(),
                n.path("stdoutBytes").asLong(),
                n.path("stderrBytes").asLong(),
                ExecEvent.Termination.valueOf(n.path("termination").asText()),
                Duration.ofNanos(n.path("durationNanos").asLong()));
    }

    /**
     * Encodes an exit.
     *
     * @param e the exit
     * @return the JSON object, with {@code "type": "exit"}
     */
    public static ObjectNode exit(ExecEvent.Exit e) {
        ObjectNode n = NODES.objectNode();
        n.put("type", "exit");
        n.put("code", e.code());
        n.put("termination", e.termination().name());
        n.put("durationNanos", e.duration().toNanos());
        return n;
    }

    /**
     * Decodes an exit.
     *
     * @param n the JSON object
     * @return the exit
     */
    public static ExecEvent.Exit exit(JsonNode n) {
        return new ExecEvent.Exit(
                n.path("code").asInt(),
                ExecEvent.Termination.valueOf(n.path("termination").asText()),
                Duration.ofNanos(n.path("durationNanos").asLong()));
    }

    /**
     * Encodes a session status.
     *
     * @param s the status
     * @return the JSON object
     */
    public static ObjectNode sessionStatus(SessionStatus s) {
        ObjectNode n = NODES.objectNode();
        n.put("sessionId", s.sessionId());
        n.put("status", s.status());
        n.put("version", s.version());
        n.put("uptimeMs", s.uptimeMs());
        n.put("lastActivity", instant(s.lastActivity()));
        n.put("execsRunning", s.execsRunning());
        n.put("ptysRunning", s.ptysRunning());
        n.put("ptysAttached", s.ptysAttached());
        n.put("provider", s.provider());
        n.put("processLauncher", s.processLauncher());
        n.put("expiresAt", instant(s.expiresAt()));
        n.put("idleTimeoutMs", millis(s.idleTimeout()));
        n.put("endReason", s.endReason() == null ? null : s.endReason().name());
        return n;
    }

    /**
     * Decodes a session status, reporting it under the given provider name.
     *
     * @param n the JSON object
     * @param provider the name to report, such as {@code remote}
     * @return the status
     */
    public static SessionStatus sessionStatus(JsonNode n, String provider) {
        String end = n.path("endReason").isTextual() ? n.get("endReason").asText() : null;
        return new SessionStatus(
                n.path("sessionId").asText(),
                n.path("status").asText(),
                n.path("version").asText(),
                n.path("uptimeMs").asLong(),
                instant(n, "lastActivity"),
                n.path("execsRunning").asInt(),
                n.path("ptysRunning").asInt(),
                n.path("ptysAttached").asInt(),
                provider,
                n.path("processLauncher").asText(),
                instant(n, "expiresAt"),
                duration(n, "idleTimeoutMs"),
                end == null ? null : SessionEndReason.valueOf(end));
    }

    /**
     * Encodes a session summary.
     *
     * @param s the summary
     * @return the JSON object
     */
    public static ObjectNode sessionInfo(SessionInfo s) {
        ObjectNode n = NODES.objectNode();
        n.put("id", s.id());
        n.put("provider", s.provider());
        n.set("labels", map(s.labels()));
        n.put("createdAt", instant(s.createdAt()));
        return n;
    }

    /**
     * Decodes a session summary, reporting it under the given provider name.
     *
     * @param n the JSON object
     * @param provider the name to report
     * @return the summary
     */
    public static SessionInfo sessionInfo(JsonNode n, String provider) {
        Instant created = instant(n, "createdAt");
        return new SessionInfo(
                n.path("id").asText(), provider, stringMap(n, "labels"), created == null ? Instant.EPOCH : created);
    }

    /**
     * The labels of a session JSON object.
     *
     * @param n the object
     * @return the labels
     */
    public static Map<String, String> labels(JsonNode n) {
        return stringMap(n, "labels");
    }

    /**
     * Encodes a file description.
     *
     * @param f the info
     * @return the JSON object
     */
    public static ObjectNode fileInfo(FileInfo f) {
        ObjectNode n = NODES.objectNode();
        n.put("path", f.path());
        n.put("name", f.name());
        n.put("type", f.type().name());
        n.put("size", f.size());
        n.put("mode", f.mode());
        n.put("modifiedAt", instant(f.modifiedAt()));
        f.symlinkTarget().ifPresent(t -> n.put("symlinkTarget", t));
        return n;
    }

    /**
     * Decodes a file description.
     *
     * @param n the JSON object
     * @return the info
     */
    public static FileInfo fileInfo(JsonNode n) {
        return new FileInfo(
                n.path("path").asText(),
                n.path("name").asText(),
                FileInfo.Type.valueOf(n.path("type").asText()),
                n.path("size").asLong(),
                n.path("mode").asInt(),
                instant(n, "modifiedAt"),
                Optional.ofNullable(
                        n.path("symlinkTarget").isTextual()
                                ? n.get("symlinkTarget").asText()
                                : null));
    }

    /**
     * Encodes a file change.
     *
     * @param e the change
     * @return the JSON bytes, with {@code "type": "file"}
     */
    public static byte[] fileEvent(FileEvent e) {
        ObjectNode n = NODES.objectNode();
        n.put("type", "file");
        n.put("kind", e.kind().name());
        n.put("path", e.path());
        return bytes(n);
    }

    /**
     * Decodes a file change.
     *
     * @param n the JSON object
     * @return the change
     */
    public static FileEvent fileEvent(JsonNode n) {
        return new FileEvent(
                FileEvent.Kind.valueOf(n.path("kind").asText()), n.path("path").asText());
    }

    /**
     * Encodes a background process summary.
     *
     * @param p the summary
     * @return the JSON object
     */
    public static ObjectNode processInfo(ProcessInfo p) {
        ObjectNode n = NODES.objectNode();
        n.put("id", p.id());
        ArrayNode argv = n.putArray("argv");
        p.argv().forEach(argv::add);
        n.put("pid", p.pid());
        n.put("startedAt", instant(p.startedAt()));
        n.put("running", p.running());
        if (p.exitCode() == null) {
            n.putNull("exitCode");
        } else {
            n.put("exitCode", p.exitCode());
        }
        return n;
    }

    /**
     * Decodes a background process summary.
     *
     * @param n the JSON object
     * @return the summary
     */
    public static ProcessInfo processInfo(JsonNode n) {
        List<String> argv = new ArrayList<>();
        n.path("argv").forEach(a -> argv.add(a.asText()));
        return new ProcessInfo(
                n.path("id").asText(),
                argv,
                n.path("pid").asLong(-1),
                instant(n, "startedAt"),
                n.path("running").asBoolean(),
                n.path("exitCode").isIntegralNumber() ? n.get("exitCode").asInt() : null);
    }

    // ------------------------------------------------------------------ stream events

    /**
     * Encodes an exec event as one compact JSON object (no newline). Line events are written by hand: they are the
     * hot path of every stream.
     *
     * @param e the event
     * @return the JSON bytes
     */
    public static byte[] event(ExecEvent e) {
        if (e instanceof ExecEvent.Line line) {
            String text = line.text();
            byte[] prefix = line.stream() == ExecEvent.StreamKind.STDOUT ? STDOUT_PREFIX : STDERR_PREFIX;
            byte[] end = line.partial() ? PARTIAL_END : END;
            int digits = digits(line.offset());
            int nextDigits = digits(line.nextOffset());
            byte[] quoted =
                    plainAscii(text) ? null : JsonStringEncoder.getInstance().quoteAsUTF8(text);
            int textLen = quoted == null ? text.length() : quoted.length;
            byte[] out =
                    new byte[prefix.length + digits + NEXT.length + nextDigits + TEXT.length + textLen + end.length];
            int pos = 0;
            System.arraycopy(prefix, 0, out, pos, prefix.length);
            pos += prefix.length;
            writeDigits(line.offset(), out, pos, digits);
            pos += digits;
            System.arraycopy(NEXT, 0, out, pos, NEXT.length);
            pos += NEXT.length;
            writeDigits(line.nextOffset(), out, pos, nextDigits);
            pos += nextDigits;
            System.arraycopy(TEXT, 0, out, pos, TEXT.length);
            pos += TEXT.length;
            if (quoted == null) {
                for (int i = 0; i < textLen; i++) {
                    out[pos + i] = (byte) text.charAt(i);
                }
            } else {
                System.arraycopy(quoted, 0, out, pos, textLen);
            }
            pos += textLen;
            System.arraycopy(end, 0, out, pos, end.length);
            return out;
        }
        return bytes(exit((ExecEvent.Exit) e));
    }

    /**
     * Writes a line event exactly as {@link #event} does, from text that is already JSON-escaped (a line of a {@link
     * LineBatch}).
     *
     * @param out where to write
     * @param stdout whether the line is stdout's
     * @param offset its offset
     * @param next the offset past it
     * @param text the escaped text
     * @param from where the line's text starts
     * @param to where it ends
     */
    public static void lineEvent(Bytes out, boolean stdout, long offset, long next, byte[] text, int from, int to) {
        out.put(stdout ? STDOUT_PREFIX : STDERR_PREFIX, 0, STDOUT_PREFIX.length);
        out.number(offset);
        out.put(NEXT, 0, NEXT.length);
        out.number(next);
        out.put(TEXT, 0, TEXT.length);
        out.put(text, from, to - from);
        out.put(END, 0, END.length);
    }

    /** A growable byte buffer for writing frames. */
    public static final class Bytes {
        private byte[] buf;
        private int len;

        /**
         * Creates a buffer.
         *
         * @param capacity the first capacity
         */
        public Bytes(int capacity) {
            buf = new byte[Math.max(16, capacity)];
        }

        private void room(int n) {
            if (len + n > buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.max(len + n, buf.length * 2));
            }
        }

        /**
         * Appends bytes.
         *
         * @param b the bytes
         * @param off where they start
         * @param n how many
         */
        public void put(byte[] b, int off, int n) {
            room(n);
            System.arraycopy(b, off, buf, len, n);
            len += n;
        }

        /**
         * Appends ASCII text.
         *
         * @param s the text
         */
        public void ascii(String s) {
            room(s.length());
            for (int i = 0; i < s.length(); i++) {
                buf[len++] = (byte) s.charAt(i);
            }
        }

        /**
         * Appends a number in decimal.
         *
         * @param v the number
         */
        public void number(long v) {
            int d = digits(v);
            room(d);
            writeDigits(v, buf, len, d);
            len += d;
        }

        /**
         * The bytes written.
         *
         * @return a copy
         */
        public byte[] toByteArray() {
            return java.util.Arrays.copyOf(buf, len);
        }
    }

    /** Whether a string is printable ASCII without quotes or backslashes: its JSON form is itself. */
    private static boolean plainAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }

    static int digits(long v) {
        if (v < 0) {
            return Long.toString(v).length();
        }
        int n = 1;
        for (long x = v; x >= 10; x /= 10) {
            n++;
        }
        return n;
    }

    static void writeDigits(long v, byte[] out, int pos, int digits) {
        if (v < 0) {
            byte[] s = Long.toString(v).getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(s, 0, out, pos, s.length);
            return;
        }
        long x = v;
        for (int i = pos + digits - 1; i >= pos; i--) {
            out[i] = (byte) ('0' + (x % 10));
            x /= 10;
        }
    }

    /**
     * Encodes an in-band error event.
     *
     * @param error the error object from {@link #error(Throwable)}
     * @return the JSON bytes
     */
    public static byte[] errorEvent(ObjectNode error) {
        ObjectNode n = NODES.objectNode();
        n.put("type", "error");
        n.set("error", error.get("error"));
        return bytes(n);
    }

    /**
     * The JSON bytes of a tree.
     *
     * @param n the tree
     * @return compact UTF-8 JSON
     */
    public static byte[] bytes(JsonNode n) {
        try {
            return JSON.writeValueAsBytes(n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A decoded stream line: an exec event, a file event, a heartbeat, an error, or something else. */
    public sealed interface StreamItem {}

    /**
     * An exec event from a stream.
     *
     * @param event the event
     */
    public record EventItem(ExecEvent event) implements StreamItem {}

    /**
     * The lines of a {@code lines} frame (see {@link LineBatch}), in order. Iterating decodes them one at a time; two
     * items are equal when their lines are.
     */
    public static final class LinesItem implements StreamItem, Iterable<ExecEvent.Line> {
        private final Iterable<? extends ExecEvent.Line> source;

        /**
         * Wraps lines.
         *
         * @param source the lines, iterable more than once
         */
        public LinesItem(Iterable<? extends ExecEvent.Line> source) {
            this.source = source;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Iterator<ExecEvent.Line> iterator() {
            return (Iterator<ExecEvent.Line>) source.iterator();
        }

        /**
         * Decodes every line.
         *
         * @return the line events
         */
        public List<ExecEvent.Line> lines() {
            List<ExecEvent.Line> all = new ArrayList<>();
            forEach(all::add);
            return all;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof LinesItem other && lines().equals(other.lines());
        }

        @Override
        public int hashCode() {
            return lines().hashCode();
        }

        @Override
        public String toString() {
            return "LinesItem" + lines();
        }
    }

    /**
     * A file change from a watch stream.
     *
     * @param event the change
     */
    public record FileItem(FileEvent event) implements StreamItem {}

    /**
     * An in-band error: the stream failed after it started.
     *
     * @param error the error, as the SDK exception it maps to
     */
    public record ErrorItem(RuntimeException error) implements StreamItem {}

    /**
     * Any other object (such as {@code heartbeat}, {@code ready} or {@code end}), which readers mostly skip.
     *
     * @param type its type
     * @param path its {@code path} field, if it has one
     */
    public record OtherItem(String type, String path) implements StreamItem {}

    /**
     * Decodes one line of a stream.
     *
     * @param bytes the buffer
     * @param off where the line starts
     * @param len its length, without the newline
     * @return the item
     */
    public static StreamItem streamItem(byte[] bytes, int off, int len) {
        StreamItem fast = fastLine(bytes, off, len);
        if (fast != null) {
            return fast;
        }
        Iterable<ExecEvent.Line> lines = LineBatch.read(bytes, off, len);
        return lines != null ? new LinesItem(lines) : parsed(bytes, off, len);
    }

    /**
     * Reads a line event written exactly as {@link #event} writes it, without a JSON parser: {@code
     * {"type":"stdout","offset":N,"next":M,"text":"..."}} with an optional {@code "partial":true}, and a text with no escapes.
     * Anything else returns {@code null} and goes through the parser.
     */
    private static StreamItem fastLine(byte[] b, int off, int len) {
        int end = off + len;
        LineHead head = lineHead(b, off, end, STDOUT_PREFIX, STDERR_PREFIX);
        if (head == null) {
            return null;
        }
        int pos = head.textStart();
        while (pos < end && b[pos] != '"') {
            if (b[pos] == '\\') {
                return null;
            }
            pos++;
        }
        int textEnd = pos;
        boolean partial;
        if (end - pos == END.length && startsWith(b, pos, end, END)) {
            partial = false;
        } else if (end - pos == PARTIAL_END.length && startsWith(b, pos, end, PARTIAL_END)) {
            partial = true;
        } else {
            return null;
        }
        String text = new String(b, head.textStart(), textEnd - head.textStart(), StandardCharsets.UTF_8);
        return new EventItem(
                head.stdout()
                        ? new ExecEvent.Stdout(text, head.offset(), partial, head.next())
                        : new ExecEvent.Stderr(text, head.offset(), partial, head.next()));
    }

    /**
     * The head that line events and {@code lines} frames share, as written here: {@code <prefix>N,"next":M,"text":"}.
     *
     * @param stdout whether the prefix was stdout's
     * @param offset the number after the prefix
     * @param next the {@code next} number
     * @param textStart where the text starts, just past its opening quote
     */
    record LineHead(boolean stdout, long offset, long next, int textStart) {}

    /**
     * Reads a {@link LineHead} without a JSON parser.
     *
     * @param b the buffer
     * @param off where the object starts
     * @param end where it ends
     * @param stdoutPrefix the opening up to the offset's digits for stdout
     * @param stderrPrefix the same for stderr, as long as the stdout one
     * @return the head, or {@code null} when the object does not start this way
     */
    static LineHead lineHead(byte[] b, int off, int end, byte[] stdoutPrefix, byte[] stderrPrefix) {
        boolean stdout;
        if (startsWith(b, off, end, stdoutPrefix)) {
            stdout = true;
        } else if (startsWith(b, off, end, stderrPrefix)) {
            stdout = false;
        } else {
            return null;
        }
        int pos = off + stdoutPrefix.length;
        int digitsStart = pos;
        long offset = 0;
        while (pos < end && b[pos] >= '0' && b[pos] <= '9' && pos - digitsStart < 18) {
            offset = offset * 10 + (b[pos] - '0');
            pos++;
        }
        if (pos == digitsStart || !startsWith(b, pos, end, NEXT)) {
            return null;
        }
        pos += NEXT.length;
        int nextStart = pos;
        long next = 0;
        while (pos < end && b[pos] >= '0' && b[pos] <= '9' && pos - nextStart < 18) {
            next = next * 10 + (b[pos] - '0');
            pos++;
        }
        if (pos == nextStart || !startsWith(b, pos, end, TEXT)) {
            return null;
        }
        return new LineHead(stdout, offset, next, pos + TEXT.length);
    }

    /** Whether {@code prefix} starts at {@code pos}, within {@code end}. */
    static boolean startsWith(byte[] b, int pos, int end, byte[] prefix) {
        if (end - pos < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (b[pos + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static StreamItem parsed(byte[] bytes, int off, int len) {
        try (JsonParser p = FACTORY.createParser(bytes, off, len)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new BackendException("the server sent a stream line that is not a JSON object", null);
            }
            String type = null;
            long offset = 0;
            long next = -1;
            String text = null;
            boolean partial = false;
            int code = 0;
            String termination = null;
            long durationNanos = 0;
            String kind = null;
            String stream = null;
            String path = null;
            JsonNode error = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                switch (name) {
                    case "type" -> type = p.getText();
                    case "offset" -> offset = p.getLongValue();
                    case "next" -> next = p.getLongValue();
                    case "text" -> text = p.getText();
                    case "partial" -> partial = t == JsonToken.VALUE_TRUE;
                    case "code" -> code = p.getIntValue();
                    case "termination" -> termination = p.getText();
                    case "durationNanos" -> durationNanos = p.getLongValue();
                    case "kind" -> kind = p.getText();
                    case "stream" -> stream = p.getText();
                    case "path" -> path = p.getText();
                    case "error" -> error = JSON.readTree(p);
                    default -> p.skipChildren();
                }
            }
            if (type == null) {
                return new OtherItem("", path);
            }
            return switch (type) {
                case "stdout" -> new EventItem(new ExecEvent.Stdout(text, offset, partial, next));
                case "stderr" -> new EventItem(new ExecEvent.Stderr(text, offset, partial, next));
                case "exit" ->
                    new EventItem(new ExecEvent.Exit(
                            code, ExecEvent.Termination.valueOf(termination), Duration.ofNanos(durationNanos)));
                case "lines" -> new LinesItem(LineBatch.split("stdout".equals(stream), offset, next, text));
                case "file" -> new FileItem(new FileEvent(FileEvent.Kind.valueOf(kind), path));
                case "error" -> {
                    ObjectNode wrapped = NODES.objectNode();
                    wrapped.set("error", error);
                    yield new ErrorItem(exception(wrapped, 500));
                }
                default -> new OtherItem(type, path);
            };
        } catch (IOException | IllegalArgumentException | NullPointerException e) {
            throw new BackendException("the server sent a stream line that cannot be read", e);
        }
    }

    // ------------------------------------------------------------------ errors

    /**
     * Encodes an error as {@code {"error": {"type": ..., "message": ..., ...}}}, with the fields its SDK type needs to
     * be rebuilt on the other side.
     *
     * @param t the error
     * @return the JSON object
     */
    public static ObjectNode error(Throwable t) {
        ObjectNode body = NODES.objectNode();
        ObjectNode e = body.putObject("error");
        if (t instanceof SandboxException) {
            e.put("type", typeName(t.getClass()));
        } else {
            e.put("type", "InternalError");
        }
        e.put("message", t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
        switch (t) {
            case InvalidArgumentException x -> e.put("field", x.field());
            case FileOperationException x -> {
                e.put("path", x.path());
                e.put("reason", x.reason().name());
            }
            case SessionClosedException x -> {
                e.put("sessionId", x.sessionId());
                e.put("reason", x.reason().name());
            }
            case SessionNotFoundException x -> e.put("sessionId", x.sessionId());
            case OffsetUnavailableException x -> {
                e.put("stream", x.stream().name());
                e.put("requested", x.requested());
                e.put("firstAvailable", x.firstAvailable());
                e.put("end", x.end());
            }
            case SandboxTimeoutException x -> e.put("timeoutMs", millis(x.timeout()));
            default -> {}
        }
        return body;
    }

    /** The SDK exception type a class is or extends: the nearest one in package {@code dev.sandbox}. */
    private static String typeName(Class<?> type) {
        Class<?> c = type;
        while (c != null && !c.getPackageName().equals("dev.sandbox")) {
            c = c.getSuperclass();
        }
        return c == null ? "SandboxException" : c.getSimpleName();
    }

    /**
     * Encodes an error of the server's own (not an SDK exception).
     *
     * @param type a type name such as {@code Unauthorized}
     * @param message the explanation
     * @return the JSON object
     */
    public static ObjectNode error(String type, String message) {
        ObjectNode body = NODES.objectNode();
        body.putObject("error").put("type", type).put("message", message);
        return body;
    }

    /**
     * Rebuilds the SDK exception an error object stands for.
     *
     * @param body the {@code {"error": ...}} object, or anything else for an unreadable error
     * @param status the HTTP status it came with
     * @return the exception
     */
    public static RuntimeException exception(JsonNode body, int status) {
        JsonNode e = body == null ? null : body.get("error");
        if (e == null || !e.isObject()) {
            return RemoteErrors.answered(status, null, "the sandbox server answered HTTP " + status, null);
        }
        String type = e.path("type").asText("");
        String message = e.path("message").asText("");
        try {
            return switch (type) {
                case "InvalidArgumentException" ->
                    new InvalidArgumentException(e.path("field").asText(""), message);
                case "FileOperationException" ->
                    new FileOperationException(
                            e.path("path").asText(""),
                            FileOperationException.Reason.valueOf(
                                    e.path("reason").asText("IO_ERROR")),
                            message,
                            null);
                case "SessionClosedException" ->
                    new SessionClosedException(
                            e.path("sessionId").asText(""),
                            SessionEndReason.valueOf(e.path("reason").asText("TERMINATED")));
                case "SessionNotFoundException" ->
                    new SessionNotFoundException(e.path("sessionId").asText(""));
                case "ProcessNotFoundException" -> new RemoteProcessNotFoundException(message);
                case "OffsetUnavailableException" -> new RemoteOffsetUnavailableException(e, message);
                case "SandboxStateException" -> new SandboxStateException(message);
                case "SandboxTimeoutException" ->
                    new SandboxTimeoutException(
                            message, Duration.ofMillis(e.path("timeoutMs").asLong()));
                case "UnsupportedFeatureException" -> new RemoteUnsupportedFeatureException(message);
                case "ProcessLaunchException" ->
                    new ProcessLaunchException(message, null, RemoteErrors.retryable(e, status));
                case "BackendException" -> RemoteErrors.answered(status, e, message, null);
                case "SandboxException" -> new SandboxException(message, null, RemoteErrors.retryable(e, status));
                default ->
                    RemoteErrors.answered(
                            status,
                            e,
                            "the sandbox server answered HTTP " + status + " " + type + ": " + message,
                            null);
            };
        } catch (IllegalArgumentException bad) {
            return RemoteErrors.answered(
                    status, e, "the sandbox server answered HTTP " + status + " " + type + ": " + message, bad);
        }
    }

    /** A process-not-found error rebuilt with the server's message. */
    static final class RemoteProcessNotFoundException extends ProcessNotFoundException {
        private static final long serialVersionUID = 1L;
        private final String message;

        RemoteProcessNotFoundException(String message) {
            super("", "");
            this.message = message;
        }

        @Override
        public String getMessage() {
            return message;
        }
    }

    /** An offset error rebuilt with the server's numbers and message. */
    static final class RemoteOffsetUnavailableException extends OffsetUnavailableException {
        private static final long serialVersionUID = 1L;
        private final String message;

        RemoteOffsetUnavailableException(JsonNode e, String message) {
            super(
                    "",
                    ExecEvent.StreamKind.valueOf(e.path("stream").asText("STDOUT")),
                    e.path("requested").asLong(),
                    e.path("firstAvailable").asLong(),
                    e.path("end").asLong());
            this.message = message;
        }

        @Override
        public String getMessage() {
            return message;
        }
    }

    /** An unsupported-feature error rebuilt with the server's message. */
    static final class RemoteUnsupportedFeatureException extends UnsupportedFeatureException {
        private static final long serialVersionUID = 1L;
        private final String message;

        RemoteUnsupportedFeatureException(String message) {
            super("remote", "this");
            this.message = message;
        }

        @Override
        public String getMessage() {
            return message;
        }
    }

    /**
     * Reads a small JSON body for an error, tolerating anything.
     *
     * @param bytes the body
     * @return the tree, or {@code null}
     */
    public static JsonNode lenient(byte[] bytes) {
        try {
            return bytes == null || bytes.length == 0 ? null : JSON.readTree(bytes);
        } catch (IOException e) {
            return null;
        }
    }
}
