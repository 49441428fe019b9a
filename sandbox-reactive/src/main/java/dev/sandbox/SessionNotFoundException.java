package dev.sandbox;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * No session with the given id (or, from {@link SandboxProvider#attachByName(String)}, the given name) exists (any
 * more) at the provider.
 *
 * <pre>{@code
 * provider.attach("missing").onErrorResume(SessionNotFoundException.class, e -> provider.create(options));
 * }</pre>
 */
public class SessionNotFoundException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final String sessionId;
    private final @Nullable String name;

    /**
     * Creates the exception.
     *
     * @param sessionId the id that was looked up
     */
    public SessionNotFoundException(String sessionId) {
        super("session not found: " + sessionId);
        this.sessionId = sessionId;
        this.name = null;
    }

    private SessionNotFoundException(String message, String name) {
        super(message);
        this.sessionId = "";
        this.name = name;
    }

    /**
     * No session has this name: {@link SandboxProvider#attachByName(String)} found none (or only one that is ending).
     *
     * @param name the name that was looked up
     * @return the exception; its {@link #sessionId()} is empty and its {@link #name()} the name
     */
    public static SessionNotFoundException named(String name) {
        return new SessionNotFoundException("no session is named '" + name + "'", name);
    }

    /**
     * The name that was looked up, when the lookup was by name.
     *
     * @return the name, or empty for a lookup by id
     */
    public Optional<String> name() {
        return Optional.ofNullable(name);
    }

    /**
     * The id that was looked up.
     *
     * @return the session id, empty when the lookup was by name
     */
    public String sessionId() {
        return sessionId;
    }
}
