package dev.sandbox.tools;

import dev.sandbox.InvalidArgumentException;
import java.util.List;
import java.util.Locale;

/**
 * The languages {@link SandboxTools#runCode(CodeLanguage, String)} runs. The code goes to the interpreter's standard
 * input, so it may be of any length up to {@link SandboxTools#MAX_CODE_BYTES} and needs no file; the sandbox's image
 * must have the interpreter (an image without it gets an answer saying so, not an error).
 *
 * <pre>{@code
 * String answer = tools.runCode(CodeLanguage.of("python"), "print(6 * 7)").block(timeout);
 * }</pre>
 */
public enum CodeLanguage {
    /** Python 3: {@code python3 -}. */
    PYTHON(List.of("python3", "-"), "python", "py", "python3"),
    /** JavaScript on Node.js: {@code node -}. */
    JAVASCRIPT(List.of("node", "-"), "javascript", "js", "node"),
    /** POSIX shell: {@code sh -s}. */
    SHELL(List.of("sh", "-s"), "shell", "sh", "bash");

    private final List<String> argv;
    private final List<String> names;

    CodeLanguage(List<String> argv, String... names) {
        this.argv = argv;
        this.names = List.of(names);
    }

    /**
     * The command that runs code of this language read from standard input.
     *
     * @return the argument vector, such as {@code [python3, -]}
     */
    public List<String> argv() {
        return argv;
    }

    /**
     * The name a model or a user writes for this language: {@code python}, {@code javascript} or {@code shell}.
     *
     * @return the language's main name
     */
    public String displayName() {
        return names.get(0);
    }

    /**
     * The language a name stands for, ignoring case: {@code python}, {@code py}, {@code python3}; {@code javascript},
     * {@code js}, {@code node}; {@code shell}, {@code sh}, {@code bash}.
     *
     * @param name the name
     * @return the language
     * @throws InvalidArgumentException naming {@code language} when the name is none of those
     */
    public static CodeLanguage of(String name) {
        String key = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        for (CodeLanguage language : values()) {
            if (language.names.contains(key)) {
                return language;
            }
        }
        throw new InvalidArgumentException(
                "language", "language must be one of python, javascript or shell, got '" + name + "'");
    }
}
