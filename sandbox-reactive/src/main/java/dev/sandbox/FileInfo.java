package dev.sandbox;

import java.time.Instant;
import java.util.Optional;

/**
 * What {@link SandboxFiles#stat(String)} and {@link SandboxFiles#list(String)} report about a path. Symbolic links
 * are reported as links (not followed), with their target.
 *
 * <p>{@link #mode()} holds the full permission bits, {@code st_mode & 07777}: the setuid ({@code 04000}), setgid
 * ({@code 02000}) and sticky ({@code 01000}) bits are kept, so a setuid program reads {@code 04755} and {@code /tmp}
 * {@code 01777}; {@link #modeString()} renders them as {@code ls -l} does ({@code -rwsr-xr-x}, {@code drwxrwxrwt}).
 * {@link #uid()} and {@link #gid()} are the numeric owner and group as the sandbox sees them ({@code -1} when a
 * provider cannot tell); {@link #owner()} and {@link #group()} are their names where the provider resolves them
 * cheaply: the local provider from this machine's {@code /etc/passwd} and {@code /etc/group}, the Docker provider
 * from the container's (read at most once a second, the first 256 KiB of each; its agent reports numeric ids only),
 * the remote provider as the server's provider does. Names from other sources (LDAP and the like) are not looked up.
 *
 * <pre>{@code
 * FileInfo info = session.files().stat("out/report.csv").block(timeout);
 * System.out.printf("%s %d bytes, mode %o, owner %d%n", info.type(), info.size(), info.mode(), info.uid());
 * System.out.println(info.modeString() + " " + info.owner().orElse(String.valueOf(info.uid())));
 * }</pre>
 *
 * @param path the absolute path inside the sandbox
 * @param name the last path element
 * @param type what kind of file it is
 * @param size the size in bytes (of the link itself for a symbolic link)
 * @param mode the permission bits with setuid, setgid and sticky, such as {@code 0644} or {@code 04755}
 * @param modifiedAt the last modification time
 * @param symlinkTarget the link's target, for a symbolic link
 * @param uid the owner's numeric user id, or {@code -1} when unknown
 * @param gid the numeric group id, or {@code -1} when unknown
 * @param owner the owner's user name, when the provider resolved it
 * @param group the group's name, when the provider resolved it
 */
public record FileInfo(
        String path,
        String name,
        Type type,
        long size,
        int mode,
        Instant modifiedAt,
        Optional<String> symlinkTarget,
        long uid,
        long gid,
        Optional<String> owner,
        Optional<String> group) {

    /** Checks the components; absent optionals become empty. */
    public FileInfo {
        symlinkTarget = symlinkTarget == null ? Optional.empty() : symlinkTarget;
        owner = owner == null ? Optional.empty() : owner;
        group = group == null ? Optional.empty() : group;
    }

    /**
     * A file whose owner and group are unknown ({@code -1}, no names): for providers that cannot tell.
     *
     * <pre>{@code
     * FileInfo info = new FileInfo("/w/a.txt", "a.txt", FileInfo.Type.FILE, 3, 0644, Instant.now(), Optional.empty());
     * }</pre>
     *
     * @param path the absolute path inside the sandbox
     * @param name the last path element
     * @param type what kind of file it is
     * @param size the size in bytes
     * @param mode the permission bits
     * @param modifiedAt the last modification time
     * @param symlinkTarget the link's target, for a symbolic link
     */
    public FileInfo(
            String path,
            String name,
            Type type,
            long size,
            int mode,
            Instant modifiedAt,
            Optional<String> symlinkTarget) {
        this(path, name, type, size, mode, modifiedAt, symlinkTarget, -1, -1, Optional.empty(), Optional.empty());
    }

    /**
     * The type and mode as {@code ls -l} shows them: a type letter ({@code -} file, {@code d} directory, {@code l}
     * link, {@code ?} other) and nine permission letters, with {@code s}/{@code S} for setuid and setgid and {@code
     * t}/{@code T} for sticky (upper case when the execute bit under it is off).
     *
     * <pre>{@code
     * assert info.mode() == 04755 && info.modeString().equals("-rwsr-xr-x");
     * }</pre>
     *
     * @return ten characters, such as {@code -rw-r--r--} or {@code drwxrwxrwt}
     */
    public String modeString() {
        char[] s = new char[10];
        s[0] = switch (type) {
            case FILE -> '-';
            case DIRECTORY -> 'd';
            case SYMLINK -> 'l';
            case OTHER -> '?';
        };
        String letters = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) {
            s[1 + i] = (mode & (0400 >> i)) != 0 ? letters.charAt(i) : '-';
        }
        special(s, 3, (mode & 04000) != 0, 's');
        special(s, 6, (mode & 02000) != 0, 's');
        special(s, 9, (mode & 01000) != 0, 't');
        return new String(s);
    }

    private static void special(char[] s, int at, boolean set, char letter) {
        if (set) {
            s[at] = s[at] == '-' ? Character.toUpperCase(letter) : letter;
        }
    }

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
