package dev.sandbox.langchain4j;

import dev.langchain4j.code.CodeExecutionEngine;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.tools.CodeLanguage;
import dev.sandbox.tools.SandboxTools;

/**
 * LangChain4j's {@link CodeExecutionEngine} running each snippet in a sandbox, in the language chosen here, through
 * {@link SandboxTools#runCode(CodeLanguage, String)}: bounded by the tools' {@link dev.sandbox.tools.ToolLimits} (a
 * program that runs too long is killed, output past the cap is cut), and answering the text a model reads, with the
 * exit code, stdout and stderr and a line saying what was cut or that the program timed out:
 *
 * <pre>{@code
 * try (SandboxTools tools = SandboxTools.lazy(provider, SessionOptions.defaults(), ToolLimits.defaults())) {
 *     CodeExecutionEngine python = SandboxCodeExecutionEngine.of(tools, CodeLanguage.PYTHON);
 *     String result = python.execute("print(6 * 7)");
 *     // exit code: 0
 *     // stdout:
 *     // 42
 *     // stderr: (empty)
 * }
 * }</pre>
 *
 * <p>The snippets share the tools' session: a file one writes, the next can read. {@link #execute(String)} blocks its
 * thread as {@link SandboxToolbox}'s methods do (see "Where the tools run" there): at most the tool timeout plus
 * {@link SandboxToolbox#WAIT_MARGIN}, and never on a non-blocking thread, where it throws {@link
 * IllegalStateException} before starting anything. The engine does not own the tools: closing them is the caller's.
 */
public final class SandboxCodeExecutionEngine implements CodeExecutionEngine {
    private final SandboxTools tools;
    private final CodeLanguage language;

    private SandboxCodeExecutionEngine(SandboxTools tools, CodeLanguage language) {
        this.tools = tools;
        this.language = language;
    }

    /**
     * An engine running code of {@code language} with {@code tools}.
     *
     * <pre>{@code
     * CodeExecutionEngine shell = SandboxCodeExecutionEngine.of(tools, CodeLanguage.SHELL);
     * }</pre>
     *
     * @param tools the sandbox operations, with their limits; the caller keeps owning them
     * @param language the language every snippet is in; the sandbox's image must have its interpreter
     * @return the engine
     * @throws InvalidArgumentException naming {@code tools} or {@code language} when {@code null}
     */
    public static SandboxCodeExecutionEngine of(SandboxTools tools, CodeLanguage language) {
        if (tools == null) {
            throw new InvalidArgumentException("tools", "tools must not be null");
        }
        if (language == null) {
            throw new InvalidArgumentException("language", "language must be one of python, javascript or shell");
        }
        return new SandboxCodeExecutionEngine(tools, language);
    }

    /**
     * The language every snippet is run as.
     *
     * @return the language given to {@link #of(SandboxTools, CodeLanguage)}
     */
    public CodeLanguage language() {
        return language;
    }

    /**
     * The sandbox operations this engine calls.
     *
     * @return the tools given to {@link #of(SandboxTools, CodeLanguage)}
     */
    public SandboxTools tools() {
        return tools;
    }

    /**
     * Runs {@code code} in the sandbox and answers its exit code and output. A program that fails, times out or prints
     * too much is an answer, not an error.
     *
     * @param code the program text
     * @return the answer: {@code exit code: N}, then stdout and stderr, with a line for what was cut or a timeout
     * @throws InvalidArgumentException naming {@code code} when it is empty or too large
     * @throws IllegalStateException on a non-blocking thread
     * @throws dev.sandbox.SandboxException when the session cannot be used (it ended, the provider is closed)
     */
    @Override
    public String execute(String code) {
        return ToolCalls.await(tools.runCode(language, code), tools.limits(), "execute");
    }

    @Override
    public String toString() {
        return "SandboxCodeExecutionEngine[" + language.displayName() + "]";
    }
}
