package dev.sandbox;

/**
 * An argument was rejected before anything was started. The message names the field and the offending value.
 *
 * <pre>{@code
 * session.exec(ExecOptions.of("ls").withCwd("relative/dir"))
 *     .subscribe(e -> {}, err -> {
 *         // InvalidArgumentException: cwd must be an absolute path, got 'relative/dir'
 *     });
 * }</pre>
 */
public class InvalidArgumentException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final String field;

    /**
     * Creates the exception.
     *
     * @param field the name of the rejected field, such as {@code cwd} or {@code argv[0]}
     * @param message the full explanation, naming the field and value
     */
    public InvalidArgumentException(String field, String message) {
        super(message);
        this.field = field;
    }

    /**
     * The name of the rejected field.
     *
     * @return the field name
     */
    public String field() {
        return field;
    }
}
