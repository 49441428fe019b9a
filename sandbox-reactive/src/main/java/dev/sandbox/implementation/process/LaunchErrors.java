package dev.sandbox.implementation.process;

import dev.sandbox.ProcessLaunchException;
import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one place where a failed process start becomes a {@link ProcessLaunchException}, and where it is decided
 * whether retrying can help. A start fails for good when the program or directory is wrong ({@code ENOENT}, {@code
 * EACCES}, {@code ENOEXEC}, {@code ENOTDIR}...); it may pass on a retry when the host was short of something for a
 * moment:
 *
 * <table>
 *   <caption>errno values that make a failed start retryable</caption>
 *   <tr><th>errno</th><th>what ran out</th></tr>
 *   <tr><td>{@code EAGAIN} (11)</td><td>processes or threads ({@code RLIMIT_NPROC}, {@code pids.max})</td></tr>
 *   <tr><td>{@code ENOMEM} (12)</td><td>memory for the new process</td></tr>
 *   <tr><td>{@code ENFILE} (23), {@code EMFILE} (24)</td><td>file descriptors, system-wide or of this JVM</td></tr>
 *   <tr><td>{@code ETXTBSY} (26)</td><td>the program file is being written right now</td></tr>
 *   <tr><td>{@code EINTR} (4), {@code EBUSY} (16)</td><td>an interrupted or busy call</td></tr>
 * </table>
 */
public final class LaunchErrors {
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int ENOMEM = 12;
    static final int EBUSY = 16;
    static final int ENFILE = 23;
    static final int EMFILE = 24;
    static final int ETXTBSY = 26;

    /** How {@code java.lang.ProcessImpl} reports the errno of a failed start: {@code error=11, ...}. */
    private static final Pattern JDK_ERRNO = Pattern.compile("error=(\\d+)");

    private LaunchErrors() {}

    /**
     * Whether a start that failed with this errno may succeed when tried again.
     *
     * @param errno the error number
     * @return {@code true} for a passing shortage
     */
    public static boolean retryable(int errno) {
        return switch (errno) {
            case EINTR, EAGAIN, ENOMEM, EBUSY, ENFILE, EMFILE, ETXTBSY -> true;
            default -> false;
        };
    }

    /**
     * The error for a start that a libc call refused.
     *
     * @param what what failed, such as {@code cannot start /bin/sh in /tmp} or {@code pipe2 failed}
     * @param errno the error number
     * @return the exception, retryable for a passing shortage
     */
    static ProcessLaunchException failure(String what, int errno) {
        return new ProcessLaunchException(what + ": " + LibC.strerror(errno), null, retryable(errno));
    }

    /**
     * The error for a start that {@link ProcessBuilder#start()} refused.
     *
     * @param what what failed, such as {@code cannot start /bin/sh in /tmp}
     * @param e the JDK's error, whose message carries the errno
     * @return the exception, retryable for a passing shortage
     */
    static ProcessLaunchException failure(String what, IOException e) {
        Matcher m = JDK_ERRNO.matcher(String.valueOf(e.getMessage()));
        boolean retryable = m.find() && retryable(Integer.parseInt(m.group(1)));
        return new ProcessLaunchException(what + ": " + e.getMessage(), e, retryable);
    }
}
