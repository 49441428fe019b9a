package dev.sandbox;

import org.jspecify.annotations.Nullable;

/**
 * A file operation failed. The message names the path; {@link #reason()} says why, so callers can react without
 * parsing messages.
 *
 * <pre>{@code
 * session.files().stat("config.json")
 *     .onErrorResume(FileOperationException.class, e -> e.reason() == FileOperationException.Reason.NOT_FOUND
 *             ? Mono.empty() : Mono.error(e));
 * }</pre>
 */
public class FileOperationException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /** Why a file operation failed. */
    public enum Reason {
        /** The path does not exist. */
        NOT_FOUND,
        /** A directory was expected. */
        NOT_A_DIRECTORY,
        /** A regular file was expected and the path is a directory. */
        IS_A_DIRECTORY,
        /** The target exists already. */
        ALREADY_EXISTS,
        /** A directory to remove is not empty and the removal was not recursive. */
        DIRECTORY_NOT_EMPTY,
        /** The sandbox's user may not do this. */
        PERMISSION_DENIED,
        /** No space is left on the device. */
        DISK_FULL,
        /** The file is larger than the caller's cap. */
        TOO_LARGE,
        /** Any other I/O failure; see the cause. */
        IO_ERROR
    }

    private final String path;
    private final Reason reason;

    /**
     * Creates the exception.
     *
     * @param path the path the operation failed on
     * @param reason why it failed
     * @param message the full explanation, naming the path
     * @param cause the underlying error, or {@code null}
     */
    public FileOperationException(String path, Reason reason, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.path = path;
        this.reason = reason;
    }

    /**
     * The path the operation failed on, as the caller gave it.
     *
     * @return the path
     */
    public String path() {
        return path;
    }

    /**
     * Why the operation failed.
     *
     * @return the reason
     */
    public Reason reason() {
        return reason;
    }
}
