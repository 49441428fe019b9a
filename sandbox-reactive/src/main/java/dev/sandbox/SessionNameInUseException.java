package dev.sandbox;

/**
 * A session could not be created with the name it asked for ({@link SessionOptions#withName(String)}): another
 * session of the provider holds it. {@link #isRetryable()} says whether that session is ending (destroyed, its
 * container or pod not yet gone: the name is free again soon) or alive (a retry fails the same way until it is
 * destroyed). {@link SandboxProvider#createOrAttach(String, SessionOptions)} handles both: it attaches to a live holder
 * and waits a bounded time for an ending one.
 *
 * <pre>{@code
 * provider.create(options.withName("build-cache"))
 *     .onErrorResume(SessionNameInUseException.class, e -> provider.attachByName(e.name()));
 * }</pre>
 */
public class SessionNameInUseException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final String name;

    /**
     * Creates the exception.
     *
     * @param name the name asked for
     * @param ending whether the session holding it is ending (then a retry may succeed)
     */
    public SessionNameInUseException(String name, boolean ending) {
        super(
                "name '" + name + "' is in use by "
                        + (ending ? "a session that is ending; retry shortly" : "a session"),
                null,
                ending);
        this.name = name;
    }

    /**
     * The name asked for.
     *
     * @return the name
     */
    public String name() {
        return name;
    }
}
