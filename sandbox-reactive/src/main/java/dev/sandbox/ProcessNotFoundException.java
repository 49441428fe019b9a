package dev.sandbox;

/**
 * No background process with the given id exists in the session.
 *
 * <pre>{@code
 * session.process("p-42").onErrorResume(ProcessNotFoundException.class, e -> Mono.empty());
 * }</pre>
 */
public class ProcessNotFoundException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param sessionId the session that was searched
     * @param processId the id that was looked up
     */
    public ProcessNotFoundException(String sessionId, String processId) {
        super("process not found: " + processId + " in session " + sessionId);
    }
}
