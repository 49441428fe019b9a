package dev.sandbox.implementation.files;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * User and group names by numeric id, from a {@code passwd} and a {@code group} file in their usual colon-separated
 * format ({@code name:x:id:...}). The files are read again when their modification time changes (looked at once a
 * second at most); at most {@value
 * #MAX_BYTES} bytes of each are read, lines that do not parse are skipped, so a large or malformed file costs little.
 * Names from other sources (LDAP, systemd's dynamic users) are not found: the caller shows the number.
 */
public final class IdNames {
    /** Bytes read at most from each file. */
    static final int MAX_BYTES = 1 << 20;

    /** The host's names: {@code /etc/passwd} and {@code /etc/group}. */
    public static final IdNames HOST = new IdNames(Path.of("/etc/passwd"), Path.of("/etc/group"));

    private final Table users;
    private final Table groups;

    /**
     * Names from two files.
     *
     * @param passwd the users file
     * @param group the groups file
     */
    public IdNames(Path passwd, Path group) {
        this.users = new Table(passwd);
        this.groups = new Table(group);
    }

    /**
     * A user's name.
     *
     * @param uid the user id
     * @return its name when the users file has it
     */
    public Optional<String> user(long uid) {
        return users.name(uid);
    }

    /**
     * A group's name.
     *
     * @param gid the group id
     * @return its name when the groups file has it
     */
    public Optional<String> group(long gid) {
        return groups.name(gid);
    }

    /**
     * Parses {@code name:x:id:...} lines; lines that do not parse are skipped.
     *
     * @param text the file's content
     * @return id to name; the first line with an id wins
     */
    public static Map<Long, String> parse(String text) {
        Map<Long, String> out = new HashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.split(":", 4);
            if (f.length < 3 || f[0].isEmpty() || f[0].startsWith("#")) {
                continue;
            }
            try {
                long id = Long.parseLong(f[2].trim());
                if (id >= 0) {
                    out.putIfAbsent(id, f[0]);
                }
            } catch (NumberFormatException e) {
                // not an entry: skipped
            }
        }
        return out;
    }

    private static final class Table {
        private final Path file;
        private FileTime loadedAt; // guarded by this
        private long checkedAt; // guarded by this; System.nanoTime() of the last look at the file
        private boolean checked; // guarded by this
        private Map<Long, String> names = Map.of(); // guarded by this

        Table(Path file) {
            this.file = file;
        }

        synchronized Optional<String> name(long id) {
            if (id < 0) {
                return Optional.empty();
            }
            long now = System.nanoTime();
            if (checked && now - checkedAt < 1_000_000_000L) {
                return Optional.ofNullable(names.get(id));
            }
            checked = true;
            checkedAt = now;
            try {
                FileTime mtime = Files.getLastModifiedTime(file);
                if (!mtime.equals(loadedAt)) {
                    try (InputStream in = Files.newInputStream(file)) {
                        names = parse(new String(in.readNBytes(MAX_BYTES), StandardCharsets.UTF_8));
                    }
                    loadedAt = mtime;
                }
            } catch (IOException e) {
                names = Map.of();
                loadedAt = null;
            }
            return Optional.ofNullable(names.get(id));
        }
    }
}
