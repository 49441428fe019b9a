package dev.sandbox;

import java.time.Instant;
import java.util.Optional;

/**
 * What {@link SandboxFiles#stat(String)} and {@link SandboxFiles#list(String)} report about a path. Symbolic links
 * are reported as links (not followed), with their target.
 *
 * <pre>{@code
 * FileInfo info = session.files().stat("out/report.csv").block(timeout);
 * System.out.printf("%s %d bytes, mode %o%n", info.type(), info.size(), info.mode());
 * }</pre>
 *
 * @param path the absolute path inside the sandbox
 * @param name the last path element
 * @param type what kind of file it is
 * @param size the size in bytes (of the link itself for a symbolic link)
 * @param mode the permission bits, such as {@code 0644}
 * @param modifiedAt the last modification time
 * @param symlinkTarget the link's target, for a symbolic link
 */
public record FileInfo(
        String path, String name, Type type, long size, int mode, Instant modifiedAt, Optional<String> symlinkTarget) {

    /** Kinds of file. */
    public enum Type {
        /** A regular file. */
        FILE,
        /** A directory. */
        DIRECTORY,
        /** A symbolic link. */
        SYMLINK,
        /** Anything else: a device, socket or pipe. */
        OTHER
    }
}
