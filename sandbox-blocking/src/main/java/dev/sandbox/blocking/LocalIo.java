package dev.sandbox.blocking;

import dev.sandbox.FileOperationException;
import dev.sandbox.FileOperationException.Reason;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/** Typed errors for the local side of a transfer (the file on this machine), in the SDK's terms. */
final class LocalIo {
    private LocalIo() {}

    static FileOperationException failure(Path local, IOException e) {
        Reason reason;
        if (e instanceof NoSuchFileException) {
            reason = Reason.NOT_FOUND;
        } else if (e instanceof FileAlreadyExistsException) {
            reason = Reason.ALREADY_EXISTS;
        } else if (e instanceof DirectoryNotEmptyException) {
            reason = Reason.DIRECTORY_NOT_EMPTY;
        } else if (e instanceof AccessDeniedException) {
            reason = Reason.PERMISSION_DENIED;
        } else if (e instanceof NotDirectoryException) {
            reason = Reason.NOT_A_DIRECTORY;
        } else {
            String text = e instanceof FileSystemException fse && fse.getReason() != null
                    ? fse.getReason()
                    : String.valueOf(e.getMessage());
            if (text.contains("No space left")) {
                reason = Reason.DISK_FULL;
            } else if (text.contains("Is a directory")) {
                reason = Reason.IS_A_DIRECTORY;
            } else if (text.contains("Not a directory")) {
                reason = Reason.NOT_A_DIRECTORY;
            } else if (text.contains("Permission denied")) {
                reason = Reason.PERMISSION_DENIED;
            } else {
                reason = Reason.IO_ERROR;
            }
        }
        return failure(local, reason, e);
    }

    static FileOperationException failure(Path local, Reason reason, @Nullable Throwable cause) {
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
        String shown = local.toString();
        return new FileOperationException(shown, reason, "local file " + shown + ": " + what, cause);
    }

    /** Removes a local tree without following symbolic links (best effort: what cannot be removed stays). */
    static void deleteTree(Path root) {
        try {
            if (!java.nio.file.Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            java.nio.file.Files.walkFileTree(root, new java.nio.file.SimpleFileVisitor<>() {
                @Override
                public java.nio.file.FileVisitResult visitFile(
                        Path f, java.nio.file.attribute.BasicFileAttributes attrs) throws IOException {
                    java.nio.file.Files.deleteIfExists(f);
                    return java.nio.file.FileVisitResult.CONTINUE;
                }

                @Override
                public java.nio.file.FileVisitResult visitFileFailed(Path f, IOException e) {
                    return java.nio.file.FileVisitResult.CONTINUE;
                }

                @Override
                public java.nio.file.FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    java.nio.file.Files.deleteIfExists(d);
                    return java.nio.file.FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // best effort
        }
    }
}
