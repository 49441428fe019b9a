package dev.sandbox.implementation.local;

import dev.sandbox.InvalidArgumentException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Maps the paths a caller gives onto the session root: relative paths resolve against it, and nothing may leave it,
 * neither by {@code ..}, by an absolute path elsewhere, nor through a symbolic link that points out.
 */
final class PathPolicy {
    private final Path root;

    /** @param root the session's workdir, as a real path */
    PathPolicy(Path root) {
        this.root = root;
    }

    Path root() {
        return root;
    }

    /**
     * Resolves a caller's path.
     *
     * @param field the argument's name, for errors
     * @param path the path as given
     * @param followLast whether the operation follows a final symbolic link (reading a file does; removing does not)
     */
    Path resolve(String field, String path, boolean followLast) {
        if (path == null || path.isEmpty()) {
            throw new InvalidArgumentException(field, field + " must not be empty");
        }
        if (path.indexOf('\0') >= 0) {
            throw new InvalidArgumentException(
                    field, field + " contains a NUL byte: '" + path.replace("\0", "\\0") + "'");
        }
        Path p = root.resolve(path).normalize();
        if (!p.startsWith(root)) {
            throw escapes(field, path);
        }
        Path parent = p.equals(root) ? root : p.getParent();
        Path existing = parent;
        while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            existing = existing.getParent();
        }
        if (existing != null && !inside(existing)) {
            throw escapes(field, path);
        }
        if (followLast && Files.isSymbolicLink(p) && !inside(p)) {
            throw escapes(field, path);
        }
        return p;
    }

    private boolean inside(Path existing) {
        try {
            return existing.toRealPath().startsWith(root);
        } catch (IOException e) {
            return false; // a dangling link: it leads nowhere inside
        }
    }

    private InvalidArgumentException escapes(String field, String path) {
        return new InvalidArgumentException(
                field, field + " '" + path + "' is outside the session root '" + root + "'");
    }
}
