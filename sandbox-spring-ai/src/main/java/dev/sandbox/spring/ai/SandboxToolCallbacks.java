package dev.sandbox.spring.ai;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;

/**
 * Spring AI {@link ToolCallback}s over a {@link SandboxTools}: they let a model run a command, run a snippet of Python,
 * JavaScript or shell, and read, write and list files in one sandbox, each call bounded by the tools' {@link
 * ToolLimits} (a command is killed at the timeout, each output stream and each file read is cut at its cap, and the
 * answer the model reads says so).
 *
 * <pre>{@code
 * SandboxTools tools = SandboxTools.lazy(LocalSandboxProvider.create(), SessionOptions.defaults(), ToolLimits.defaults());
 * String reply = ChatClient.create(chatModel)
 *         .prompt("How many CPUs does the sandbox have?")
 *         .tools(SandboxToolCallbacks.of(tools))
 *         .call()
 *         .content();
 * tools.close(); // destroys the sandbox the first tool call created
 * }</pre>
 *
 * <h2>The tools</h2>
 *
 * <table>
 *   <caption>Tool names and arguments (all strings)</caption>
 *   <tr><th>name</th><th>arguments</th><th>answer</th></tr>
 *   <tr><td>{@value #RUN_COMMAND}</td><td>{@code command}</td><td>exit code, stdout and stderr of {@code sh -c
 *       command}</td></tr>
 *   <tr><td>{@value #RUN_CODE}</td><td>{@code language} ({@code python}, {@code javascript} or {@code shell}),
 *       {@code code}</td><td>exit code, stdout and stderr of the snippet</td></tr>
 *   <tr><td>{@value #READ_FILE}</td><td>{@code path}</td><td>the file's text, cut at the read cap</td></tr>
 *   <tr><td>{@value #WRITE_FILE}</td><td>{@code path}, {@code content}</td><td>how many bytes were written</td></tr>
 *   <tr><td>{@value #LIST_FILES}</td><td>{@code path} (optional, the session's workdir by default)</td><td>one line
 *       per entry: type, size, name</td></tr>
 * </table>
 *
 * <p>Relative paths resolve against the session's workdir.
 *
 * <h2>What the model reads when something goes wrong</h2>
 *
 * <ul>
 *   <li>A command that fails, exits non-zero or times out, and a file that does not exist, are answers, as {@link
 *       SandboxTools} gives them: the model reads them and may try again.
 *   <li>Bad input (not a JSON object, a missing or ill-typed argument, an unknown language, a path the sandbox
 *       refuses) is answered with a line starting {@code error:} that names the argument, such as {@code error:
 *       missing argument 'command' (string): the shell command line to run}; the chat goes on and the model may correct
 *       its call. This answer is returned by the callback itself, so it reaches the model whatever {@code
 *       ToolExecutionExceptionProcessor} the application configured.
 *   <li>A sandbox that is gone or failing (the session ended, the tools or the provider closed, the provider
 *       unreachable, no answer 30 s past the timeout) is thrown as Spring AI's {@code ToolExecutionException}: Spring AI's default processor sends its
 *       message to the model, and an application that configured {@code alwaysThrow} gets the exception from its
 *       {@code ChatClient} call.
 * </ul>
 *
 * <h2>Where they run</h2>
 *
 * <p>Spring AI calls tools synchronously, and these callbacks block the calling thread until the sandbox answers: for
 * as long as the command runs, at most the tools' timeout plus 30 s (after which {@link SandboxTools} gives up), and
 * in no case longer than {@link #blockTimeout(ToolLimits)}. Which thread that is depends on how the application
 * calls the model:
 *
 * <ul>
 *   <li>{@code ChatClient...call()}: the tools run on the thread that called {@code call()}, one after the other.
 *       That thread must be one that may block: a servlet request thread, a virtual thread, {@code
 *       Schedulers.boundedElastic()}. Called on a Reactor or Netty non-blocking thread (a WebFlux handler, {@code
 *       Schedulers.parallel()}), a callback does not block: it throws an {@link IllegalStateException} that names the
 *       tool and the thread, which ends the {@code call()}; wrap the call in {@code Mono.fromCallable(...)
 *       .subscribeOn(Schedulers.boundedElastic())}, or use {@code stream()}.
 *   <li>{@code ChatClient...stream()}: Spring AI's tool-calling advisor runs the tool calls on {@code
 *       Schedulers.boundedElastic()}, whatever thread subscribed, so a WebFlux application may return the stream as it
 *       is.
 * </ul>
 *
 * <p>Interrupting the blocked thread, or reaching the block timeout, cancels the operation, which kills the command.
 */
public final class SandboxToolCallbacks {

    /** The name of the tool that runs a shell command line. */
    public static final String RUN_COMMAND = "run_command";

    /** The name of the tool that runs a snippet of Python, JavaScript or shell. */
    public static final String RUN_CODE = "run_code";

    /** The name of the tool that reads a text file. */
    public static final String READ_FILE = "read_file";

    /** The name of the tool that writes a text file. */
    public static final String WRITE_FILE = "write_file";

    /** The name of the tool that lists a directory. */
    public static final String LIST_FILES = "list_files";

    /**
     * How much longer than the tools' timeout a callback waits for an answer before it gives up and cancels. {@link
     * SandboxTools} itself fails a call that takes 30 s longer than its timeout (creating a lazy session, a slow
     * daemon); this wait is longer still, a backstop that only a tools implementation that never answers reaches.
     */
    public static final Duration BLOCK_MARGIN = Duration.ofSeconds(45);

    /** The longest name prefix {@link #of(SandboxTools, String)} accepts. */
    public static final int MAX_PREFIX_LENGTH = 48;

    private static final Pattern PREFIX = Pattern.compile("[A-Za-z0-9_-]*");

    private SandboxToolCallbacks() {}

    /**
     * The five sandbox tools over {@code tools}, named {@value #RUN_COMMAND}, {@value #RUN_CODE}, {@value #READ_FILE},
     * {@value #WRITE_FILE} and {@value #LIST_FILES}.
     *
     * <pre>{@code
     * chatClient.prompt(question).tools(SandboxToolCallbacks.of(tools)).call().content();
     * }</pre>
     *
     * @param tools the tools, whose session and limits every call uses; the caller closes it
     * @return the callbacks, in the order above
     */
    public static List<ToolCallback> of(SandboxTools tools) {
        return of(tools, "");
    }

    /**
     * The five sandbox tools over {@code tools}, each name preceded by {@code prefix}, so that one model may be given
     * two sandboxes (or a sandbox beside other tools of the same names).
     *
     * <pre>{@code
     * List<ToolCallback> build = SandboxToolCallbacks.of(buildTools, "build_");  // build_run_command, ...
     * }</pre>
     *
     * @param tools the tools, whose session and limits every call uses; the caller closes it
     * @param prefix letters, digits, {@code _} and {@code -}, at most {@link #MAX_PREFIX_LENGTH} characters; may be
     *     empty
     * @return the callbacks
     * @throws InvalidArgumentException naming {@code prefix} when it has other characters or is too long
     */
    public static List<ToolCallback> of(SandboxTools tools, String prefix) {
        Objects.requireNonNull(tools, "tools");
        if (prefix == null
                || prefix.length() > MAX_PREFIX_LENGTH
                || !PREFIX.matcher(prefix).matches()) {
            throw new InvalidArgumentException(
                    "prefix",
                    "prefix must be at most " + MAX_PREFIX_LENGTH + " letters, digits, '_' or '-', got "
                            + (prefix == null ? "null" : "'" + prefix + "'"));
        }
        return List.of(SandboxToolCallback.values(tools, prefix));
    }

    /**
     * The five sandbox tools as a {@link ToolCallbackProvider}, for {@code ChatClient.Builder.defaultTools}
     * or a Spring bean.
     *
     * <pre>{@code
     * ChatClient chat = ChatClient.builder(chatModel).defaultTools(SandboxToolCallbacks.provider(tools)).build();
     * }</pre>
     *
     * @param tools the tools, whose session and limits every call uses; the caller closes it
     * @return a provider of the callbacks of {@link #of(SandboxTools)}
     */
    public static ToolCallbackProvider provider(SandboxTools tools) {
        return ToolCallbackProvider.from(of(tools));
    }

    /**
     * How long a callback over tools with these limits blocks at most: the timeout plus {@link #BLOCK_MARGIN}.
     *
     * @param limits the tools' limits
     * @return the longest wait of one call
     */
    public static Duration blockTimeout(ToolLimits limits) {
        return limits.timeout().plus(BLOCK_MARGIN);
    }
}
