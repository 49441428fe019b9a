package dev.sandbox.langchain4j;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.tools.CodeLanguage;
import dev.sandbox.tools.SandboxTools;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * LangChain4j tools that let a model use one sandbox: run a command, run a snippet of Python, JavaScript or shell, and
 * read, write and list files. Hand an instance to {@code AiServices.builder(...).tools(...)}; each {@code @Tool}
 * method is a thin adapter of {@link SandboxTools}, which bounds every call (timeout, output cap, file and listing
 * caps from its {@link dev.sandbox.tools.ToolLimits}) and answers the text the model reads, saying what was cut.
 *
 * <pre>{@code
 * try (LocalSandboxProvider provider = LocalSandboxProvider.create();
 *         SandboxTools tools = SandboxTools.lazy(provider, SessionOptions.defaults(), ToolLimits.defaults())) {
 *     Assistant assistant = AiServices.builder(Assistant.class)
 *             .chatModel(chatModel)
 *             .tools(SandboxToolbox.of(tools))
 *             .build();
 *     String reply = assistant.chat("How many CPUs does the sandbox see?");
 * }
 * }</pre>
 *
 * <h2>What the model gets</h2>
 *
 * <p>A command that fails, times out or prints too much is an answer ({@code exit code: 1}, {@code [timed out after
 * 60 s: the command was killed]}, {@code [stdout truncated: ...]}), as is a file that does not exist. A bad argument
 * (an empty command, an unknown language, an empty path) throws {@link InvalidArgumentException} naming the argument;
 * LangChain4j's default tool error handler hands its message to the model, which may correct the call. A session
 * that is gone throws the SDK's {@link dev.sandbox.SessionClosedException} (or another {@link
 * dev.sandbox.SandboxException}), also sent to the model by that handler unless the application installs its own
 * ({@code AiServices.builder(...).toolExecutionErrorHandler(...)}).
 *
 * <h2>Where the tools run</h2>
 *
 * <p>LangChain4j calls tools synchronously: with a {@code ChatModel}, on the thread that called the AI service, one
 * after another (or, after {@code executeToolsConcurrently(executor)}, several at once on that executor). Each method
 * blocks its thread until the sandbox answers, at most the tool timeout plus {@link #WAIT_MARGIN}; a wait that runs
 * out throws {@link dev.sandbox.SandboxTimeoutException} and an interrupt throws {@link
 * dev.sandbox.blocking.SandboxInterruptedException}, both after killing the command. So call the AI service from a
 * thread that may block: a request thread of a servlet application, a virtual thread, or {@code
 * Schedulers.boundedElastic()} in a reactive one, never a Reactor or Netty event loop. On a non-blocking thread
 * ({@code Schedulers.isInNonBlockingThread()}) the methods start nothing and throw {@link IllegalStateException}
 * saying so; LangChain4j's default tool error handler passes that message to the model. With a {@code
 * StreamingChatModel}, LangChain4j runs the tools on the thread that delivers the model's response (after {@code
 * executeToolsConcurrently(...)}, on its executor, while the delivering thread waits for them): use a streaming model
 * whose client delivers on a thread that may block.
 *
 * <p>The toolbox does not own the {@link SandboxTools}: closing them (and so destroying a lazy session) is the
 * caller's.
 */
public final class SandboxToolbox {

    /**
     * How much longer than the tool timeout a method waits for the sandbox's answer: {@link SandboxTools} itself gives
     * up on a call some 30 s after the timeout (creating a lazy session, a slow daemon), so this wait normally ends
     * with its answer or error.
     */
    public static final Duration WAIT_MARGIN = Duration.ofSeconds(40);

    private final SandboxTools tools;

    private SandboxToolbox(SandboxTools tools) {
        this.tools = tools;
    }

    /**
     * The tools over {@code tools}' session.
     *
     * <pre>{@code
     * SandboxToolbox toolbox = SandboxToolbox.of(SandboxTools.of(session, ToolLimits.defaults()));
     * }</pre>
     *
     * @param tools the sandbox operations, with their limits; the caller keeps owning them
     * @return the toolbox
     * @throws InvalidArgumentException naming {@code tools} when it is {@code null}
     */
    public static SandboxToolbox of(SandboxTools tools) {
        if (tools == null) {
            throw new InvalidArgumentException("tools", "tools must not be null");
        }
        return new SandboxToolbox(tools);
    }

    /**
     * The sandbox operations this toolbox calls.
     *
     * @return the tools given to {@link #of(SandboxTools)}
     */
    public SandboxTools tools() {
        return tools;
    }

    /**
     * Runs a shell command line in the sandbox ({@code sh -c COMMAND}) and answers its exit code, stdout and stderr.
     *
     * @param command the command line
     * @return the answer the model reads
     * @throws InvalidArgumentException naming {@code command} when it is empty or too long
     * @throws IllegalStateException on a non-blocking thread
     */
    @Tool(
            name = "run_command",
            value = "Runs a shell command line (sh -c) in the sandbox's working directory and returns its exit code,"
                    + " stdout and stderr. Long output is cut and the answer says so; a command that runs too long is"
                    + " killed.")
    public String runCommand(
            @P(name = "command", value = "the shell command line to run, for example: ls -la") String command) {
        return ToolCalls.await(tools.runCommand(command), tools.limits(), "run_command");
    }

    /**
     * Runs a snippet with the interpreter of its language in the sandbox, the code on the interpreter's standard
     * input, and answers as {@link #runCommand(String)} does.
     *
     * @param language {@code python}, {@code javascript} or {@code shell} (and the aliases {@link CodeLanguage#of}
     *     knows)
     * @param code the program text
     * @return the answer the model reads
     * @throws InvalidArgumentException naming {@code language} or {@code code} when unknown, empty or too large
     * @throws IllegalStateException on a non-blocking thread
     */
    @Tool(
            name = "run_code",
            value = "Runs a snippet of Python (python3), JavaScript (node) or shell (sh) in the sandbox and returns its"
                    + " exit code, stdout and stderr. Print what you want to see. Long output is cut and the answer"
                    + " says so; a program that runs too long is killed.")
    public String runCode(
            @P(name = "language", value = "the language of the code: python, javascript or shell") String language,
            @P(name = "code", value = "the complete program text") String code) {
        CodeLanguage lang = CodeLanguage.of(language);
        return ToolCalls.await(tools.runCode(lang, code), tools.limits(), "run_code");
    }

    /**
     * Reads a text file in the sandbox, its head only when it is large (the answer says so).
     *
     * @param path the file, absolute or relative to the sandbox's working directory
     * @return the content, or what kept it from being read
     * @throws InvalidArgumentException naming {@code path} when it is empty or too long
     * @throws IllegalStateException on a non-blocking thread
     */
    @Tool(
            name = "read_file",
            value = "Reads a text file in the sandbox and returns its content (UTF-8). A large file is cut and the"
                    + " answer says so.")
    public String readFile(
            @P(name = "path", value = "the file's path, absolute or relative to the working directory") String path) {
        return ToolCalls.await(tools.readFile(path), tools.limits(), "read_file");
    }

    /**
     * Writes a text file in the sandbox, replacing it if it exists and creating its missing parent directories.
     *
     * @param path the file, absolute or relative to the sandbox's working directory
     * @param content the text to write (UTF-8)
     * @return {@code wrote N bytes to PATH}, or what kept it from being written
     * @throws InvalidArgumentException naming {@code path} or {@code content} when missing or too large
     * @throws IllegalStateException on a non-blocking thread
     */
    @Tool(
            name = "write_file",
            value = "Writes a text file (UTF-8) in the sandbox, replacing it if it exists and creating missing parent"
                    + " directories.")
    public String writeFile(
            @P(name = "path", value = "the file's path, absolute or relative to the working directory") String path,
            @P(name = "content", value = "the complete text of the file") String content) {
        return ToolCalls.await(tools.writeFile(path, content), tools.limits(), "write_file");
    }

    /**
     * Lists a directory of the sandbox: one line per entry with its type and mode, size and name.
     *
     * @param path the directory, absolute or relative to the sandbox's working directory; {@code null} or empty for
     *     the working directory
     * @return the listing, or what kept it from being listed
     * @throws InvalidArgumentException naming {@code path} when it is too long
     * @throws IllegalStateException on a non-blocking thread
     */
    @Tool(
            name = "list_files",
            value = "Lists the entries of a directory in the sandbox (not recursively): type and mode, size in bytes,"
                    + " and name; directory names end with /. A long listing is cut and the answer says so.")
    public String listFiles(
            @P(
                            name = "path",
                            value = "the directory, absolute or relative to the working directory; omit it for the"
                                    + " working directory",
                            required = false)
                    @Nullable
                    String path) {
        return ToolCalls.await(tools.listFiles(path), tools.limits(), "list_files");
    }

    @Override
    public String toString() {
        return "SandboxToolbox[" + Objects.toString(tools.limits()) + "]";
    }
}
