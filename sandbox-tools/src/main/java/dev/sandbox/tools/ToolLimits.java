package dev.sandbox.tools;

import dev.sandbox.InvalidArgumentException;
import java.time.Duration;

/**
 * The bounds every tool call of {@link SandboxTools} obeys, so that a model's request cannot run forever nor flood
 * the conversation (or the host's memory) with output.
 *
 * <pre>{@code
 * ToolLimits limits = ToolLimits.defaults().withTimeout(Duration.ofSeconds(20)).withMaxOutputBytes(8 * 1024);
 * }</pre>
 *
 * @param timeout how long a command or snippet may run before it is killed (its answer then says so)
 * @param maxOutputBytes how many bytes of each output stream (stdout, stderr) an answer shows; the rest is counted and
 *     the answer says how much was left out
 * @param maxReadBytes how many bytes of a file {@link SandboxTools#readFile(String)} shows
 * @param maxListEntries how many entries {@link SandboxTools#listFiles(String)} shows
 */
public record ToolLimits(Duration timeout, int maxOutputBytes, int maxReadBytes, int maxListEntries) {

    /** The longest timeout accepted: one hour. */
    public static final Duration MAX_TIMEOUT = Duration.ofHours(1);

    /** The largest output or read cap accepted: 16 MiB. */
    public static final int MAX_BYTES = 16 * 1024 * 1024;

    /** The largest list cap accepted: 50,000 entries. */
    public static final int MAX_LIST_ENTRIES = 50_000;

    /**
     * Checks the bounds.
     *
     * @throws InvalidArgumentException naming {@code timeout}, {@code maxOutputBytes}, {@code maxReadBytes} or {@code
     *     maxListEntries} when one is out of range
     */
    public ToolLimits {
        if (timeout == null || timeout.isZero() || timeout.isNegative() || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new InvalidArgumentException(
                    "timeout", "timeout must be positive and at most " + MAX_TIMEOUT + ", got " + timeout);
        }
        bytes("maxOutputBytes", maxOutputBytes);
        bytes("maxReadBytes", maxReadBytes);
        if (maxListEntries < 1 || maxListEntries > MAX_LIST_ENTRIES) {
            throw new InvalidArgumentException(
                    "maxListEntries",
                    "maxListEntries must be between 1 and " + MAX_LIST_ENTRIES + ", got " + maxListEntries);
        }
    }

    private static void bytes(String field, int value) {
        if (value < 1 || value > MAX_BYTES) {
            throw new InvalidArgumentException(
                    field, field + " must be between 1 and " + MAX_BYTES + " bytes, got " + value);
        }
    }

    /**
     * The defaults: 60 s per command, 16 KiB of each output stream, 64 KiB of a file, 500 list entries.
     *
     * @return the default limits
     */
    public static ToolLimits defaults() {
        return new ToolLimits(Duration.ofSeconds(60), 16 * 1024, 64 * 1024, 500);
    }

    /**
     * A copy with another command timeout.
     *
     * @param timeout positive, at most {@link #MAX_TIMEOUT}
     * @return the new limits
     */
    public ToolLimits withTimeout(Duration timeout) {
        return new ToolLimits(timeout, maxOutputBytes, maxReadBytes, maxListEntries);
    }

    /**
     * A copy with another cap on each output stream.
     *
     * @param maxOutputBytes 1 to {@link #MAX_BYTES}
     * @return the new limits
     */
    public ToolLimits withMaxOutputBytes(int maxOutputBytes) {
        return new ToolLimits(timeout, maxOutputBytes, maxReadBytes, maxListEntries);
    }

    /**
     * A copy with another cap on file reads.
     *
     * @param maxReadBytes 1 to {@link #MAX_BYTES}
     * @return the new limits
     */
    public ToolLimits withMaxReadBytes(int maxReadBytes) {
        return new ToolLimits(timeout, maxOutputBytes, maxReadBytes, maxListEntries);
    }

    /**
     * A copy with another cap on listed entries.
     *
     * @param maxListEntries 1 to {@link #MAX_LIST_ENTRIES}
     * @return the new limits
     */
    public ToolLimits withMaxListEntries(int maxListEntries) {
        return new ToolLimits(timeout, maxOutputBytes, maxReadBytes, maxListEntries);
    }
}
