package dev.sandbox.implementation.files;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxFiles;
import java.util.Comparator;

/**
 * Checks and rules every provider's files share: ranges, list depths, the bound on listed entries and the order of a
 * recursive listing.
 */
public final class FileArguments {
    private FileArguments() {}

    /**
     * Refuses a negative offset or length.
     *
     * @param offset the first byte
     * @param length how many bytes at most
     * @throws InvalidArgumentException naming the field
     */
    public static void checkRange(long offset, long length) {
        if (offset < 0) {
            throw new InvalidArgumentException("offset", "offset must not be negative, got " + offset);
        }
        if (length < 0) {
            throw new InvalidArgumentException("length", "length must not be negative, got " + length);
        }
    }

    /**
     * Checks a list depth and caps it at {@link SandboxFiles#LIST_MAX_DEPTH}.
     *
     * @param depth the depth asked
     * @return the depth to list
     * @throws InvalidArgumentException naming {@code depth} when it is below 1
     */
    public static int depth(int depth) {
        if (depth < 1) {
            throw new InvalidArgumentException("depth", "depth must be at least 1, got " + depth);
        }
        return Math.min(depth, SandboxFiles.LIST_MAX_DEPTH);
    }

    /**
     * The error for a listing over {@link SandboxFiles#LIST_MAX_ENTRIES}.
     *
     * @param path the path as the caller gave it
     * @return the exception
     */
    public static FileOperationException tooManyEntries(String path) {
        return new FileOperationException(
                path,
                FileOperationException.Reason.TOO_LARGE,
                path + ": more than " + SandboxFiles.LIST_MAX_ENTRIES + " entries (or "
                        + SandboxFiles.LIST_MAX_PATH_CHARS
                        + " characters of paths) to list; list a subdirectory or a smaller depth",
                null);
    }

    /**
     * Counts a listing's entries and their paths' characters against {@link SandboxFiles#LIST_MAX_ENTRIES} and {@link
     * SandboxFiles#LIST_MAX_PATH_CHARS}; one per listing, used by one thread at a time.
     */
    public static final class ListBound {
        private final String shownPath;
        private long entries;
        private long chars;

        /**
         * A bound for one listing.
         *
         * @param shownPath the path to name in the error
         */
        public ListBound(String shownPath) {
            this.shownPath = shownPath;
        }

        /**
         * Counts one more entry.
         *
         * @param path its path
         * @throws FileOperationException {@link FileOperationException.Reason#TOO_LARGE} past the bound
         */
        public void add(String path) {
            entries++;
            chars += path.length();
            if (entries > SandboxFiles.LIST_MAX_ENTRIES || chars > SandboxFiles.LIST_MAX_PATH_CHARS) {
                throw tooManyEntries(shownPath);
            }
        }
    }

    /**
     * Pre-order of paths under one directory: compared one path element at a time, each by name, so that a directory
     * comes right before its own entries, and siblings are in name order.
     */
    public static final Comparator<FileInfo> PRE_ORDER = (a, b) -> comparePaths(a.path(), b.path());

    static int comparePaths(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            char x = a.charAt(i);
            char y = b.charAt(i);
            if (x != y) {
                if (x == '/') {
                    return -1; // a's element ended first: a shorter name sorts first
                }
                if (y == '/') {
                    return 1;
                }
                return Character.compare(x, y);
            }
        }
        return Integer.compare(a.length(), b.length());
    }
}
