package dev.sandbox.implementation.agent;

import dev.sandbox.BackendException;
import dev.sandbox.FileOperationException;

/**
 * The agent answered a request with {@code ERROR}: a Linux {@code errno} (below 1,000) or one of the protocol's own
 * codes ({@link #LIMIT} and the others). File operations map it to a {@link FileOperationException} with {@link
 * #toFileOperationException(String)}.
 */
public class AgentErrnoException extends BackendException {
    private static final long serialVersionUID = 1L;

    /** A malformed frame; the agent closed the connection. */
    public static final int BAD_FRAME = 1000;
    /** No common protocol version. */
    public static final int VERSION = 1001;
    /** Too many streams, connections or processes. */
    public static final int LIMIT = 1002;
    /** An attach offset older than the ring's oldest byte. */
    public static final int OFFSET_GONE = 1003;
    /** No background process with that id. */
    public static final int NO_PROCESS = 1004;

    private final int code;
    private final String agentMessage;

    /**
     * Creates the exception.
     *
     * @param operation what was asked, such as {@code stat /tmp/x}
     * @param code the agent's code
     * @param agentMessage the agent's message (untrusted text, already bounded by the frame)
     */
    public AgentErrnoException(String operation, int code, String agentMessage) {
        super(operation + " failed: " + name(code) + " (" + code + "): " + agentMessage, null, retryable(code));
        this.code = code;
        this.agentMessage = agentMessage;
    }

    /**
     * The agent's code: an {@code errno} below 1,000, else one of this class's constants.
     *
     * @return the code
     */
    public int code() {
        return code;
    }

    /**
     * The agent's own message.
     *
     * @return the message
     */
    public String agentMessage() {
        return agentMessage;
    }

    /**
     * What this error means for a file operation.
     *
     * @return the reason
     */
    public FileOperationException.Reason reason() {
        return reason(code);
    }

    /**
     * The file operation reason of an agent error code.
     *
     * @param code the agent's code
     * @return the reason; {@code IO_ERROR} for codes without a better one
     */
    public static FileOperationException.Reason reason(int code) {
        return switch (code) {
            case 2 -> FileOperationException.Reason.NOT_FOUND; // ENOENT
            case 1, 13 -> FileOperationException.Reason.PERMISSION_DENIED; // EPERM, EACCES
            case 17 -> FileOperationException.Reason.ALREADY_EXISTS; // EEXIST
            case 20 -> FileOperationException.Reason.NOT_A_DIRECTORY; // ENOTDIR
            case 21 -> FileOperationException.Reason.IS_A_DIRECTORY; // EISDIR
            case 39 -> FileOperationException.Reason.DIRECTORY_NOT_EMPTY; // ENOTEMPTY
            case 28, 122 -> FileOperationException.Reason.DISK_FULL; // ENOSPC, EDQUOT
            case 27 -> FileOperationException.Reason.TOO_LARGE; // EFBIG
            default -> FileOperationException.Reason.IO_ERROR;
        };
    }

    /**
     * This error as the public file error.
     *
     * @param path the path as the caller gave it
     * @return the exception, with this one as its cause
     */
    public FileOperationException toFileOperationException(String path) {
        return new FileOperationException(path, reason(), path + ": " + agentMessage, this);
    }

    /**
     * A readable name of a code, for messages.
     *
     * @param code the agent's code
     * @return its name, such as {@code ENOENT}, or {@code errno 77}
     */
    public static String name(int code) {
        return switch (code) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 7 -> "E2BIG";
            case 8 -> "ENOEXEC";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 17 -> "EEXIST";
            case 20 -> "ENOTDIR";
            case 21 -> "EISDIR";
            case 22 -> "EINVAL";
            case 23 -> "ENFILE";
            case 24 -> "EMFILE";
            case 28 -> "ENOSPC";
            case 39 -> "ENOTEMPTY";
            case BAD_FRAME -> "BAD_FRAME";
            case VERSION -> "VERSION";
            case LIMIT -> "LIMIT";
            case OFFSET_GONE -> "OFFSET_GONE";
            case NO_PROCESS -> "NO_PROCESS";
            default -> "errno " + code;
        };
    }

    /** A shortage that passes: out of processes, memory or descriptors, or the agent's stream limit. */
    static boolean retryable(int code) {
        return code == 11 || code == 12 || code == 23 || code == 24 || code == LIMIT;
    }
}
