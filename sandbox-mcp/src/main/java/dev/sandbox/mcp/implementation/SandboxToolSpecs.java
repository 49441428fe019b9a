package dev.sandbox.mcp.implementation;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.tools.CodeLanguage;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.server.McpServerFeatures.AsyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.concurrent.Queues;

/**
 * The MCP tools over a {@link SessionRegistry}: their names, descriptions and input schemas, and handlers that check
 * the arguments, find the caller's session and call {@link SandboxTools}. A bad argument, an unknown session or a
 * session that ended is a tool error result ({@code isError}) naming what was wrong; a command that fails is a normal
 * answer, as {@link SandboxTools} gives it. Output of {@code run_command} and {@code run_code} is sent as progress
 * notifications while it runs when the call carries a progress token, bounded in count and size.
 */
public final class SandboxToolSpecs {
    private static final Logger LOG = LoggerFactory.getLogger(SandboxToolSpecs.class);

    /** The transport-context key holding the caller (the HTTP token's name); absent for stdio. */
    public static final String OWNER_KEY = "dev.sandbox.mcp.owner";

    /** The caller of a transport without callers of its own (stdio). */
    public static final String LOCAL_OWNER = "stdio";

    /** The longest single progress message, in characters; longer lines are cut and say so. */
    static final int MAX_PROGRESS_MESSAGE_CHARS = 2048;

    /** The most progress notifications one call sends. */
    static final int MAX_PROGRESS_NOTIFICATIONS = 1000;

    /** The longest label key or value a caller may set. */
    private static final int MAX_LABEL_CHARS = 256;

    /** The most labels a caller may set on one session. */
    private static final int MAX_LABELS = 32;

    /** The longest lifetime a caller may ask for. */
    private static final Duration MAX_LIFETIME = Duration.ofHours(24);

    private final SessionRegistry registry;
    private final ToolLimits limits;
    private final SessionOptions sessionDefaults;

    /**
     * Creates the tools.
     *
     * @param registry the sessions
     * @param limits the bounds of every call; {@code timeout_seconds} may only shorten the timeout
     * @param sessionDefaults the options every created session starts from
     */
    public SandboxToolSpecs(SessionRegistry registry, ToolLimits limits, SessionOptions sessionDefaults) {
        this.registry = registry;
        this.limits = limits;
        this.sessionDefaults = sessionDefaults;
    }

    /**
     * The names of the tools, in the order they are listed.
     *
     * @return the names
     */
    public static List<String> names() {
        return List.of(
                "create_session",
                "list_sessions",
                "destroy_session",
                "run_command",
                "run_code",
                "read_file",
                "write_file",
                "list_files");
    }

    /**
     * The tools with their handlers.
     *
     * @return the specifications
     */
    public List<AsyncToolSpecification> specifications() {
        List<AsyncToolSpecification> specs = new ArrayList<>();
        specs.add(spec(
                "create_session",
                "Create a sandbox session, where run_command, run_code and the file tools run: "
                        + Isolation.of(registry.providerName())
                        + ". Answers the session id to pass to them. Sessions end"
                        + " after their lifetime (default "
                        + human(sessionDefaults.lifetime().orElse(null)) + "), when destroyed, or when this server"
                        + " stops; at most " + registry.max() + " exist at once.",
                schema(
                        Map.of(
                                "labels",
                                        Map.of(
                                                "type", "object",
                                                "description",
                                                        "optional labels (string keys and values) to tell sessions apart",
                                                "additionalProperties", Map.of("type", "string")),
                                "lifetime_seconds",
                                        Map.of(
                                                "type",
                                                "integer",
                                                "minimum",
                                                1,
                                                "maximum",
                                                MAX_LIFETIME.toSeconds(),
                                                "description",
                                                "optional: how long the session may live, in seconds")),
                        List.of()),
                false,
                this::createSession));
        specs.add(spec(
                "list_sessions",
                "List the sandbox sessions you created through this server (id, age, lifetime, labels). Sessions made"
                        + " by other clients or other tokens are not shown.",
                schema(Map.of(), List.of()),
                true,
                c -> listSessions(c.owner())));
        specs.add(spec(
                "destroy_session",
                "Destroy a sandbox session you created: its processes are killed and its files are gone.",
                schema(Map.of("session_id", sessionIdProperty()), List.of("session_id")),
                false,
                c -> destroySession(c.owner(), c.args())));
        specs.add(spec(
                "run_command",
                "Run a shell command line (sh -c) in a session's working directory and answer its exit code, stdout"
                        + " and stderr, each capped at " + limits.maxOutputBytes() + " bytes (the answer says what"
                        + " was cut). A non-zero exit or a timeout is an answer, not an error. With a progress token,"
                        + " output lines are sent as progress notifications while the command runs.",
                schema(
                        Map.of(
                                "session_id", sessionIdProperty(),
                                "command",
                                        Map.of(
                                                "type",
                                                "string",
                                                "description",
                                                "the command line, such as: ls -l | wc -l"),
                                "timeout_seconds", timeoutProperty()),
                        List.of("session_id", "command")),
                false,
                c -> run(c, (tools, out) -> tools.runCommand(text(c.args(), "command"), out))));
        specs.add(spec(
                "run_code",
                "Run a snippet of Python (python3), JavaScript (node) or shell (sh) in a session, the code given to"
                        + " the interpreter on its standard input, and answer as run_command does. The session's image"
                        + " must have the interpreter.",
                schema(
                        Map.of(
                                "session_id", sessionIdProperty(),
                                "language",
                                        Map.of(
                                                "type",
                                                "string",
                                                "enum",
                                                List.of("python", "javascript", "shell"),
                                                "description",
                                                "the snippet's language"),
                                "code", Map.of("type", "string", "description", "the program text"),
                                "timeout_seconds", timeoutProperty()),
                        List.of("session_id", "language", "code")),
                false,
                c -> run(c, (tools, out) -> tools.runCode(language(c.args()), text(c.args(), "code"), out))));
        specs.add(spec(
                "read_file",
                "Read a text file of a session (UTF-8), at most " + limits.maxReadBytes()
                        + " bytes of it; the answer says when the rest was left out.",
                schema(
                        Map.of(
                                "session_id", sessionIdProperty(),
                                "path", pathProperty("the file, absolute or relative to the working directory")),
                        List.of("session_id", "path")),
                true,
                c -> withTools(c.owner(), c.args(), null, tools -> tools.readFile(text(c.args(), "path")))));
        specs.add(spec(
                "write_file",
                "Write a text file in a session (UTF-8), creating its parent directories and replacing what was"
                        + " there.",
                schema(
                        Map.of(
                                "session_id", sessionIdProperty(),
                                "path", pathProperty("the file, absolute or relative to the working directory"),
                                "content", Map.of("type", "string", "description", "the file's new content")),
                        List.of("session_id", "path", "content")),
                false,
                c -> withTools(
                        c.owner(),
                        c.args(),
                        null,
                        tools -> tools.writeFile(text(c.args(), "path"), textAllowEmpty(c.args(), "content")))));
        specs.add(spec(
                "list_files",
                "List a directory of a session: one line per entry with its type, size and name, at most "
                        + limits.maxListEntries() + " entries.",
                schema(
                        Map.of(
                                "session_id", sessionIdProperty(),
                                "path", pathProperty("the directory; the working directory when left out")),
                        List.of("session_id")),
                true,
                c -> withTools(c.owner(), c.args(), null, tools -> tools.listFiles(optionalPath(c.args())))));
        return specs;
    }

    // ------------------------------------------------------------------ handlers

    private Mono<CallToolResult> createSession(Call c) {
        Map<String, Object> args = c.args();
        SessionOptions options = sessionDefaults;
        Object labels = args.get("labels");
        if (labels != null) {
            if (!(labels instanceof Map<?, ?> map)) {
                throw new InvalidArgumentException("labels", "labels must be an object of strings");
            }
            if (map.size() > MAX_LABELS) {
                throw new InvalidArgumentException("labels", "at most " + MAX_LABELS + " labels, got " + map.size());
            }
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!(e.getValue() instanceof String value)) {
                    throw new InvalidArgumentException("labels", "label '" + e.getKey() + "' must have a string value");
                }
                String key = String.valueOf(e.getKey());
                if (key.isEmpty() || key.length() > MAX_LABEL_CHARS || value.length() > MAX_LABEL_CHARS) {
                    throw new InvalidArgumentException(
                            "labels",
                            "label keys must be 1 to " + MAX_LABEL_CHARS + " characters and values at most "
                                    + MAX_LABEL_CHARS);
                }
                options = options.withLabel(key, value);
            }
        }
        Long lifetime = wholeNumber(args, "lifetime_seconds", 1, MAX_LIFETIME.toSeconds());
        if (lifetime != null) {
            options = options.withLifetime(Duration.ofSeconds(lifetime));
        }
        SessionOptions chosen = options.validate();
        return registry.create(c.owner(), chosen)
                .map(entry -> ok("created session " + entry.id() + " (" + registry.providerName() + ", lifetime "
                        + human(entry.lifetime()) + "); pass session_id \"" + entry.id()
                        + "\" to run_command, run_code and the file tools"));
    }

    private Mono<CallToolResult> listSessions(String owner) {
        List<SessionRegistry.Entry> entries = registry.list(owner);
        if (entries.isEmpty()) {
            return Mono.just(ok("no sessions: create one with create_session"));
        }
        StringBuilder text = new StringBuilder();
        text.append(entries.size())
                .append(entries.size() == 1 ? " session" : " sessions")
                .append(":\n");
        java.time.Instant now = java.time.Instant.now();
        for (SessionRegistry.Entry e : entries) {
            text.append(e.id())
                    .append("  age ")
                    .append(human(Duration.between(e.createdAt(), now)))
                    .append("  lifetime ")
                    .append(human(e.lifetime()));
            if (!e.labels().isEmpty()) {
                text.append("  labels ");
                List<String> pairs = new ArrayList<>();
                e.labels().forEach((k, v) -> pairs.add(Escape.line(k) + "=" + Escape.line(v)));
                text.append(String.join(",", pairs));
            }
            text.append('\n');
        }
        return Mono.just(ok(text.toString().stripTrailing()));
    }

    private Mono<CallToolResult> destroySession(String owner, Map<String, Object> args) {
        String id = text(args, "session_id");
        return registry.destroy(owner, id)
                .map(done -> done ? ok("destroyed session " + id) : unknownSession(owner, id));
    }

    /** A run with its output streamed as progress notifications when the call carries a progress token. */
    private Mono<CallToolResult> run(Call c, BiFunction<SandboxTools, Consumer<String>, Mono<String>> call) {
        Long timeout =
                wholeNumber(c.args(), "timeout_seconds", 1, limits.timeout().toSeconds());
        if (c.progressToken() == null) {
            return withTools(c.owner(), c.args(), timeout, tools -> call.apply(tools, null));
        }
        return withTools(c.owner(), c.args(), timeout, tools -> {
            Progress progress = new Progress(c.exchange(), c.progressToken(), limits.maxOutputBytes());
            return progress.around(call.apply(tools, progress));
        });
    }

    private static CodeLanguage language(Map<String, Object> args) {
        return CodeLanguage.of(text(args, "language"));
    }

    private Mono<CallToolResult> withTools(
            String owner, Map<String, Object> args, Long timeoutSeconds, Function<SandboxTools, Mono<String>> op) {
        String id = text(args, "session_id");
        SessionRegistry.Entry entry = registry.get(owner, id);
        if (entry == null) {
            return Mono.just(unknownSession(owner, id));
        }
        ToolLimits callLimits =
                timeoutSeconds == null ? limits : limits.withTimeout(Duration.ofSeconds(timeoutSeconds));
        SandboxTools tools = SandboxTools.of(entry.session(), callLimits);
        return Mono.defer(() -> op.apply(tools)).map(SandboxToolSpecs::ok).onErrorResume(e -> {
            if (e instanceof SessionClosedException || e instanceof SessionNotFoundException) {
                registry.forget(entry);
                return Mono.just(error(
                        "session " + id + " has ended (" + e.getMessage() + "); create a new one with create_session"));
            }
            return Mono.error(e);
        });
    }

    private CallToolResult unknownSession(String owner, String id) {
        List<String> ids =
                registry.list(owner).stream().map(SessionRegistry.Entry::id).toList();
        return error("no session '" + Escape.line(id) + "' among the sessions you created here"
                + (ids.isEmpty() ? " (you have none)" : " (" + String.join(", ", ids) + ")")
                + "; create one with create_session");
    }

    // ------------------------------------------------------------------ plumbing

    private AsyncToolSpecification spec(
            String name,
            String description,
            Map<String, Object> schema,
            boolean readOnly,
            Function<Call, Mono<CallToolResult>> handler) {
        McpSchema.Tool tool = McpSchema.Tool.builder(name, schema)
                .description(description)
                .annotations(McpSchema.ToolAnnotations.builder()
                        .readOnlyHint(readOnly)
                        .destructiveHint(name.equals("destroy_session") || name.equals("write_file"))
                        .openWorldHint(false)
                        .build())
                .build();
        return AsyncToolSpecification.builder()
                .tool(tool)
                .callHandler((exchange, request) -> call(exchange, request, handler))
                .build();
    }

    private Mono<CallToolResult> call(
            McpAsyncServerExchange exchange, CallToolRequest request, Function<Call, Mono<CallToolResult>> handler) {
        Map<String, Object> args = request.arguments() == null ? Map.of() : request.arguments();
        return Mono.defer(() -> handler.apply(new Call(exchange, owner(exchange), args, request.progressToken())))
                .onErrorResume(e -> Mono.just(failure(request.name(), e)));
    }

    private static CallToolResult failure(String tool, Throwable e) {
        if (e instanceof InvalidArgumentException bad) {
            return error("invalid argument '" + bad.field() + "': " + bad.getMessage());
        }
        if (e instanceof SandboxException) {
            return error(e.getMessage());
        }
        LOG.warn("tool {} failed", tool, e);
        return error(tool + " failed: " + e);
    }

    /**
     * One tool call.
     *
     * @param exchange the client's exchange
     * @param owner who calls
     * @param args the arguments
     * @param progressToken the call's progress token, or {@code null}
     */
    record Call(McpAsyncServerExchange exchange, String owner, Map<String, Object> args, Object progressToken) {}

    static CallToolResult ok(String text) {
        return CallToolResult.builder().addTextContent(text).isError(false).build();
    }

    static CallToolResult error(String text) {
        return CallToolResult.builder().addTextContent(text).isError(true).build();
    }

    private static String owner(McpAsyncServerExchange exchange) {
        McpTransportContext context = exchange.transportContext();
        Object owner = context == null ? null : context.get(OWNER_KEY);
        return owner instanceof String s ? s : LOCAL_OWNER;
    }

    private static Map<String, Object> schema(Map<String, Object> properties, List<String> required) {
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", new LinkedHashMap<>(properties));
        schema.put("required", required);
        schema.put("additionalProperties", false);
        return schema;
    }

    private static Map<String, Object> sessionIdProperty() {
        return Map.of("type", "string", "description", "the id create_session answered");
    }

    private Map<String, Object> timeoutProperty() {
        return Map.of(
                "type",
                "integer",
                "minimum",
                1,
                "maximum",
                limits.timeout().toSeconds(),
                "description",
                "optional: kill the command after this many seconds (default and most: "
                        + limits.timeout().toSeconds() + ")");
    }

    private static Map<String, Object> pathProperty(String description) {
        return Map.of("type", "string", "description", description);
    }

    /** A required, non-blank string argument. */
    static String text(Map<String, Object> args, String name) {
        Object v = args.get(name);
        if (v == null) {
            throw new InvalidArgumentException(name, name + " is required");
        }
        if (!(v instanceof String s)) {
            throw new InvalidArgumentException(name, name + " must be a string");
        }
        if (s.isBlank()) {
            throw new InvalidArgumentException(name, name + " must not be empty");
        }
        return s;
    }

    /** A required string argument that may be empty. */
    static String textAllowEmpty(Map<String, Object> args, String name) {
        Object v = args.get(name);
        if (!(v instanceof String s)) {
            throw new InvalidArgumentException(name, name + (v == null ? " is required" : " must be a string"));
        }
        return s;
    }

    private static String optionalPath(Map<String, Object> args) {
        return args.get("path") == null ? "." : text(args, "path");
    }

    /** An optional whole number from {@code min} to {@code max}. */
    static Long wholeNumber(Map<String, Object> args, String name, long min, long max) {
        Object v = args.get(name);
        if (v == null) {
            return null;
        }
        long n;
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            n = ((Number) v).longValue();
        } else if (v instanceof Number num && num.doubleValue() == Math.rint(num.doubleValue())) {
            n = (long) num.doubleValue();
        } else {
            throw new InvalidArgumentException(name, name + " must be a whole number, got " + v);
        }
        if (n < min || n > max) {
            throw new InvalidArgumentException(name, name + " must be from " + min + " to " + max + ", got " + n);
        }
        return n;
    }

    static String human(Duration d) {
        if (d == null) {
            return "unlimited";
        }
        long s = d.toSeconds();
        if (s < 120) {
            return s + "s";
        }
        if (s < 7200) {
            return (s / 60) + "m" + (s % 60 == 0 ? "" : (s % 60) + "s");
        }
        return (s / 3600) + "h" + ((s % 3600) / 60 == 0 ? "" : ((s % 3600) / 60) + "m");
    }

    /**
     * Sends a call's output lines as progress notifications, in order, before its result: at most {@link
     * #MAX_PROGRESS_NOTIFICATIONS} of them and {@code maxBytes} of text, then one saying the rest is in the result.
     * The lines come one at a time on a non-blocking thread; they wait in a bounded queue while notifications go out.
     */
    static final class Progress implements Consumer<String> {
        private final McpAsyncServerExchange exchange;
        private final Object token;
        private final int maxChars;
        private final Sinks.Many<String> lines = Sinks.many()
                .unicast()
                .onBackpressureBuffer(Queues.<String>get(256).get());
        private int sent;
        private long chars;
        private boolean stopped;

        Progress(McpAsyncServerExchange exchange, Object token, int maxChars) {
            this.exchange = exchange;
            this.token = token;
            this.maxChars = maxChars;
        }

        @Override
        public void accept(String line) {
            if (stopped) {
                return;
            }
            String message = line.length() > MAX_PROGRESS_MESSAGE_CHARS
                    ? line.substring(0, MAX_PROGRESS_MESSAGE_CHARS) + " [line cut]"
                    : line;
            if (sent + 1 >= MAX_PROGRESS_NOTIFICATIONS || chars + message.length() > maxChars) {
                stopped = true;
                message = "[no more output is streamed: the result holds it, up to its cap]";
            }
            sent++;
            chars += message.length();
            if (lines.tryEmitNext(message).isFailure()) {
                stopped = true; // the client reads slower than the command writes: the result still has it all
            }
        }

        /** The call's answer, after every notification of its output went out. */
        Mono<String> around(Mono<String> answer) {
            long[] n = {0};
            Mono<Void> pump = lines.asFlux()
                    .concatMap(message -> exchange.progressNotification(
                                    new McpSchema.ProgressNotification(token, (double) ++n[0], null, message, null))
                            .onErrorResume(e -> Mono.empty()))
                    .then();
            return Mono.zip(pump.thenReturn(""), answer.doFinally(signal -> lines.tryEmitComplete()))
                    .map(t -> t.getT2());
        }
    }
}
