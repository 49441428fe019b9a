package dev.sandbox.spring.ai;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.tools.CodeLanguage;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.ai.tool.execution.ToolExecutionException;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** One sandbox tool as a Spring AI callback; see {@link SandboxToolCallbacks} for what it answers and where it runs. */
final class SandboxToolCallback implements ToolCallback {

    /** The longest tool input read, in characters; a longer one is answered with an error. */
    static final int MAX_INPUT_CHARS = ToolLimits.MAX_BYTES + 64 * 1024;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static final Argument COMMAND =
            new Argument("command", "the shell command line to run, such as \"ls -l /tmp\"", true, List.of());
    private static final Argument LANGUAGE =
            new Argument("language", "the snippet's language", true, List.of("python", "javascript", "shell"));
    private static final Argument CODE = new Argument(
            "code", "the snippet's source text, given to the interpreter on standard input", true, List.of());
    private static final Argument PATH = new Argument(
            "path", "the file's path; a relative path starts at the sandbox's working directory", true, List.of());
    private static final Argument CONTENT = new Argument("content", "the file's new text", true, List.of());
    private static final Argument DIRECTORY = new Argument(
            "path", "the directory to list; the sandbox's working directory when left out", false, List.of());

    /** One string argument of a tool. */
    private record Argument(String name, String description, boolean required, List<String> oneOf) {}

    private final ToolDefinition definition;
    private final Function<JsonNode, Mono<String>> operation;
    private final Duration blockTimeout;

    private SandboxToolCallback(
            String name,
            String description,
            String schema,
            Duration blockTimeout,
            Function<JsonNode, Mono<String>> op) {
        this.definition = ToolDefinition.builder()
                .name(name)
                .description(description)
                .inputSchema(schema)
                .build();
        this.operation = op;
        this.blockTimeout = blockTimeout;
    }

    /** The five tools, in the order {@link SandboxToolCallbacks} lists them. */
    static ToolCallback[] values(SandboxTools tools, String prefix) {
        ToolLimits limits = tools.limits();
        Duration block = SandboxToolCallbacks.blockTimeout(limits);
        String bounds = "It is killed after " + seconds(limits.timeout()) + "; the answer shows at most "
                + limits.maxOutputBytes() + " bytes of each of stdout and stderr and says when output was cut.";
        return new ToolCallback[] {
            new SandboxToolCallback(
                    prefix + SandboxToolCallbacks.RUN_COMMAND,
                    "Runs a shell command line (sh -c) in the sandbox, a Linux environment (a container of its own with"
                            + " the docker provider; host processes without isolation with the local one), and"
                            + " answers its exit code, stdout and stderr. Standard input is empty. " + bounds,
                    schema(COMMAND),
                    block,
                    args -> tools.runCommand(required(args, COMMAND))),
            new SandboxToolCallback(
                    prefix + SandboxToolCallbacks.RUN_CODE,
                    "Runs a snippet of Python (python3), JavaScript (node) or POSIX shell in the sandbox and answers"
                            + " its exit code, stdout and stderr; print what you want to see. The answer says so when the"
                            + " sandbox lacks the interpreter. " + bounds,
                    schema(LANGUAGE, CODE),
                    block,
                    args -> {
                        String language = required(args, LANGUAGE);
                        String code = required(args, CODE);
                        return tools.runCode(CodeLanguage.of(language), code);
                    }),
            new SandboxToolCallback(
                    prefix + SandboxToolCallbacks.READ_FILE,
                    "Reads a text file in the sandbox and answers its content (UTF-8), at most " + limits.maxReadBytes()
                            + " bytes of it; the answer says when the file was longer.",
                    schema(PATH),
                    block,
                    args -> tools.readFile(required(args, PATH))),
            new SandboxToolCallback(
                    prefix + SandboxToolCallbacks.WRITE_FILE,
                    "Writes a text file in the sandbox (UTF-8), replacing it if it exists and creating missing"
                            + " parent directories; answers how many bytes were written.",
                    schema(PATH, CONTENT),
                    block,
                    args -> tools.writeFile(required(args, PATH), required(args, CONTENT))),
            new SandboxToolCallback(
                    prefix + SandboxToolCallbacks.LIST_FILES,
                    "Lists a directory in the sandbox, one line per entry with its type, size in bytes and name, at"
                            + " most " + limits.maxListEntries() + " entries.",
                    schema(DIRECTORY),
                    block,
                    args -> tools.listFiles(optional(args, DIRECTORY, ".")))
        };
    }

    @Override
    public ToolDefinition getToolDefinition() {
        return definition;
    }

    @Override
    public String call(String toolInput) {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("the sandbox tool '" + definition.name()
                    + "' blocks (up to " + seconds(blockTimeout) + ") and must not be called on the non-blocking"
                    + " thread '" + Thread.currentThread().getName() + "': call ChatClient's call() from a thread"
                    + " that may block (for example Schedulers.boundedElastic()), or use stream(), which runs tools"
                    + " on Schedulers.boundedElastic()");
        }
        Mono<String> answer;
        try {
            answer = operation.apply(parse(toolInput));
        } catch (BadInput e) {
            return "error: " + e.getMessage();
        } catch (InvalidArgumentException e) {
            return invalid(e);
        }
        return await(answer);
    }

    @Override
    public String call(String toolInput, @Nullable ToolContext toolContext) {
        return call(toolInput);
    }

    private String await(Mono<String> answer) {
        try {
            String text = answer.block(blockTimeout);
            return text == null ? "" : text;
        } catch (InvalidArgumentException e) {
            return invalid(e);
        } catch (RuntimeException e) {
            Throwable cause = Exceptions.unwrap(e);
            if (cause instanceof InterruptedException) {
                Thread.currentThread().interrupt();
                CancellationException cancelled =
                        new CancellationException("the sandbox tool '" + definition.name() + "' was interrupted");
                cancelled.initCause(cause);
                throw cancelled;
            }
            if (e instanceof IllegalStateException && e.getCause() instanceof TimeoutException) {
                throw new ToolExecutionException(
                        definition,
                        new IllegalStateException(
                                "the sandbox did not answer " + definition.name() + " within " + seconds(blockTimeout)
                                        + "; the call was cancelled",
                                e));
            }
            if (cause instanceof InvalidArgumentException invalid) {
                return invalid(invalid);
            }
            throw new ToolExecutionException(definition, cause instanceof RuntimeException r ? r : e);
        }
    }

    private static String invalid(InvalidArgumentException e) {
        return "error: invalid argument '" + e.field() + "': " + e.getMessage();
    }

    private static JsonNode parse(String toolInput) {
        String input = toolInput == null || toolInput.isBlank() ? "{}" : toolInput;
        if (input.length() > MAX_INPUT_CHARS) {
            throw new BadInput("the tool input is " + input.length() + " characters long, more than the "
                    + MAX_INPUT_CHARS + " accepted");
        }
        JsonNode node;
        try {
            node = JSON.readTree(input);
        } catch (JacksonException e) {
            throw new BadInput("the tool input is not valid JSON (" + firstLine(e.getOriginalMessage())
                    + "); send a JSON object of the arguments");
        }
        if (node == null || !node.isObject()) {
            throw new BadInput("the tool input must be a JSON object of the arguments, got " + kind(node));
        }
        return node;
    }

    private static String required(JsonNode args, Argument argument) {
        String value = optional(args, argument, null);
        if (value == null) {
            throw new BadInput("missing argument '" + argument.name() + "' (string): " + argument.description()
                    + (argument.oneOf().isEmpty() ? "" : ", one of " + String.join(", ", argument.oneOf())));
        }
        return value;
    }

    private static @Nullable String optional(JsonNode args, Argument argument, @Nullable String fallback) {
        JsonNode value = args.get(argument.name());
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.isString()) {
            throw new BadInput("argument '" + argument.name() + "' must be a string, got " + kind(value));
        }
        return value.stringValue();
    }

    private static String kind(@Nullable JsonNode node) {
        if (node == null) {
            return "nothing";
        }
        return switch (node.getNodeType()) {
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            case NUMBER -> "a number";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            case STRING -> "a string";
            default -> "a " + node.getNodeType().name().toLowerCase(Locale.ROOT);
        };
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        String line = message.lines().findFirst().orElse("unreadable");
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }

    /** A JSON schema of an object of string arguments, refusing others. */
    private static String schema(Argument... arguments) {
        ObjectNode schema = JSON.createObjectNode().put("type", "object");
        ObjectNode properties = schema.putObject("properties");
        ArrayNode required = JSON.createArrayNode();
        for (Argument argument : arguments) {
            ObjectNode property = properties.putObject(argument.name()).put("type", "string");
            if (!argument.oneOf().isEmpty()) {
                ArrayNode values = property.putArray("enum");
                argument.oneOf().forEach(values::add);
            }
            property.put("description", argument.description());
            if (argument.required()) {
                required.add(argument.name());
            }
        }
        if (!required.isEmpty()) {
            schema.set("required", required);
        }
        schema.put("additionalProperties", false);
        return JSON.writeValueAsString(schema);
    }

    static String seconds(Duration duration) {
        long millis = duration.toMillis();
        return millis % 1000 == 0 ? millis / 1000 + " s" : String.format(Locale.ROOT, "%.3f s", millis / 1000.0);
    }

    /** An input the model sent that the tool cannot use; its message is answered to the model. */
    private static final class BadInput extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadInput(String message) {
            super(message, null, false, false);
        }
    }
}
