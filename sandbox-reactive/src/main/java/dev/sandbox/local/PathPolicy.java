package dev.sandbox.local;

import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
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

    /** The typed error for an I/O failure on a path. */
    static FileOperationException failure(String path, IOException e) {
        FileOperationException.Reason reason;
        if (e instanceof NoSuchFileException) {
            reason = FileOperationException.Reason.NOT_FOUND;
        } else if (e instanceof FileAlreadyExistsException) {
            reason = FileOperationException.Reason.ALREADY_EXISTS;
        } else if (e instanceof DirectoryNotEmptyException) {
            reason = FileOperationException.Reason.DIRECTORY_NOT_EMPTY;
        } else if (e instanceof AccessDeniedException) {
            reason = FileOperationException.Reason.PERMISSION_DENIED;
        } else if (e instanceof NotDirectoryException) {
            reason = FileOperationException.Reason.NOT_A_DIRECTORY;
        } else {
            String reasonText = e instanceof FileSystemException fse ? fse.getReason() : e.getMessage();
            String text = reasonText == null ? "" : reasonText;
            if (text.contains("No space left")) {
                reason = FileOperationException.Reason.DISK_FULL;
            } else if (text.contains("Is a directory")) {
                reason = FileOperationException.Reason.IS_A_DIRECTORY;
            } else if (text.contains("Not a directory")) {
                reason = FileOperationException.Reason.NOT_A_DIRECTORY;
            } else if (text.contains("Permission denied")) {
                reason = FileOperationException.Reason.PERMISSION_DENIED;
            } else {
                reason = FileOperationException.Reason.IO_ERROR;
            }
        }
        return failure(path, reason, e);
    }

    static FileOperationException failure(String path, FileOperationException.Reason reason, Throwable cause) {
        String what = switch (reason) {
            case NOT_FOUND -> "no such file or directory";
            case NOT_A_DIRECTORY -> "not a directory";
            case IS_A_DIRECTORY -> "is a directory";
            case ALREADY_EXISTS -> "already exists";
            case DIRECTORY_NOT_EMPTY -> "directory not empty";
            case PERMISSION_DENIED -> "permission denied";
            case DISK_FULL -> "no space left on device";
            case TOO_LARGE -> "file too large";
            case IO_ERROR -> "I/O error" + (cause == null ? "" : ": " + cause.getMessage());
        };
        return new FileOperationException(path, reason, path + ": " + what, cause);
    }
}
