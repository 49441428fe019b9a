package dev.sandbox.implementation.files;

import dev.sandbox.FileOperationException;
import java.nio.charset.StandardCharsets;

/**
 * The limits of a directory transfer and the checks every entry name passes before anything is made of it. Names
 * and link targets come from a sandbox, so from an adversary: a name is refused unless it is relative, every
 * component is an ordinary name (not empty, {@code .} or {@code ..}), and it holds no control character (NUL, newline,
 * escape...); a link target is refused unless it is relative and stays inside the tree when resolved from the link's
 * directory.
 */
public final class TreeNames {
    /** The most entries one transfer may hold. */
    public static final int MAX_ENTRIES = 100_000;

    /** The longest entry name or link target, in UTF-8 bytes. */
    public static final int MAX_NAME_BYTES = 4096;

    /** The deepest an entry may be nested (components in its name). */
    public static final int MAX_DEPTH = 128;

    /** The most content bytes one transfer may hold: 64 GiB. */
    public static final long MAX_TOTAL_BYTES = 64L << 30;

    private TreeNames() {}

    /**
     * A refusal naming the entry: {@link FileOperationException.Reason#PERMISSION_DENIED}.
     *
     * @param name the entry
     * @param why the reason
     * @return the exception
     */
    public static FileOperationException refused(String name, String why) {
        String shown = printable(name);
        return new FileOperationException(
                shown, FileOperationException.Reason.PERMISSION_DENIED, "entry '" + shown + "' refused: " + why, null);
    }

    /**
     * A limit passed: {@link FileOperationException.Reason#TOO_LARGE}, naming the entry.
     *
     * @param name the entry
     * @param why the limit
     * @return the exception
     */
    public static FileOperationException tooLarge(String name, String why) {
        String shown = printable(name);
        return new FileOperationException(
                shown, FileOperationException.Reason.TOO_LARGE, "entry '" + shown + "': " + why, null);
    }

    /**
     * A name with its control characters escaped and cut at 300 characters, for messages.
     *
     * @param name the name
     * @return what may be shown
     */
    public static String printable(String name) {
        if (name == null) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        int max = Math.min(name.length(), 300);
        for (int i = 0; i < max; i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\x%02x", (int) c));
            } else {
                b.append(c);
            }
        }
        if (name.length() > max) {
            b.append("...");
        }
        return b.toString();
    }

    /**
     * Checks an entry name.
     *
     * @param name the name, relative to the tree's root
     * @return the name
     * @throws FileOperationException when it is refused or too long
     */
    public static String check(String name) {
        if (name == null || name.isEmpty()) {
            throw refused("", "an empty name");
        }
        if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw tooLarge(name, "a name longer than " + MAX_NAME_BYTES + " bytes");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw refused(name, "a control character in the name");
            }
        }
        if (name.startsWith("/")) {
            throw refused(name, "an absolute name");
        }
        String[] parts = name.split("/", -1);
        if (parts.length > MAX_DEPTH) {
            throw tooLarge(name, "nested deeper than " + MAX_DEPTH + " levels");
        }
        for (String part : parts) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                throw refused(name, "a name with an empty, '.' or '..' component");
            }
        }
        return name;
    }

    /**
     * Checks a symbolic link's target: relative, and inside the tree when resolved from the link's directory.
     *
     * @param name the link's (checked) name
     * @param target its target
     * @throws FileOperationException when it is refused
     */
    public static void checkLink(String name, String target) {
        if (target == null || target.isEmpty()) {
            throw refused(name, "a symbolic link with an empty target");
        }
        if (target.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw tooLarge(name, "a link target longer than " + MAX_NAME_BYTES + " bytes");
        }
        for (int i = 0; i < target.length(); i++) {
            char c = target.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw refused(name, "a control character in the link target");
            }
        }
        if (target.startsWith("/")) {
            throw refused(name, "a symbolic link to an absolute path ('" + printable(target) + "')");
        }
        // only leading ".." components, then plain names: with every link in the tree checked so, no chain of links
        // leads out (a ".." after a name that is itself a link would climb from the link's target, not from here)
        int up = 0;
        boolean down = false;
        for (String part : target.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                if (down) {
                    throw refused(name, "a symbolic link with '..' after a name ('" + printable(target) + "')");
                }
                up++;
            } else {
                down = true;
            }
        }
        if (up > name.split("/").length - 1) {
            throw refused(name, "a symbolic link that leads out of the tree ('" + printable(target) + "')");
        }
    }

    /**
     * Joins a directory path and a relative entry name.
     *
     * @param dir the directory
     * @param name the entry
     * @return the joined path
     */
    public static String join(String dir, String name) {
        return dir.endsWith("/") ? dir + name : dir + "/" + name;
    }
}
