package dev.sandbox.implementation.agent;

import dev.sandbox.FileInfo;
import java.time.Instant;
import java.util.Optional;

/**
 * A file as the agent reports it (the protocol's {@code info}): {@code lstat} of the path.
 *
 * @param type 1 file, 2 directory, 3 symlink, 4 other
 * @param mode {@code st_mode & 07777}: permissions with setuid, setgid and sticky bits
 * @param uid owner
 * @param gid group
 * @param size size in bytes (a symlink's own)
 * @param mtimeNs modification time, nanoseconds since the epoch
 * @param path the absolute path
 * @param linkTarget a symlink's target, else empty
 */
public record AgentFileInfo(
        int type, int mode, long uid, long gid, long size, long mtimeNs, String path, String linkTarget) {

    /** A regular file. */
    public static final int FILE = 1;
    /** A directory. */
    public static final int DIRECTORY = 2;
    /** A symbolic link. */
    public static final int SYMLINK = 3;
    /** Anything else. */
    public static final int OTHER = 4;

    /**
     * The public form of this information.
     *
     * @return the file info
     */
    public FileInfo toFileInfo() {
        FileInfo.Type t = switch (type) {
            case FILE -> FileInfo.Type.FILE;
            case DIRECTORY -> FileInfo.Type.DIRECTORY;
            case SYMLINK -> FileInfo.Type.SYMLINK;
            default -> FileInfo.Type.OTHER;
        };
        String trimmed = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        String name = trimmed.substring(trimmed.lastIndexOf('/') + 1);
        Instant modified =
                Instant.ofEpochSecond(Math.floorDiv(mtimeNs, 1_000_000_000L), Math.floorMod(mtimeNs, 1_000_000_000L));
        Optional<String> target = t == FileInfo.Type.SYMLINK ? Optional.of(linkTarget) : Optional.empty();
        // the agent reports numeric ids only: names are the caller's to add
        return new FileInfo(path, name, t, size, mode, modified, target, uid, gid, Optional.empty(), Optional.empty());
    }
}
