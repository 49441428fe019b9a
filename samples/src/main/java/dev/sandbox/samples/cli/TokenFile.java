package dev.sandbox.samples.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Reads a bearer token from a file: its content without surrounding whitespace (a trailing newline is common).
 *
 * <p>A token file others can read gets a <em>warning</em>, not a refusal as ssh gives a private key: the token is
 * as good as the file's mode, but the platforms a server is deployed on decide that mode (Kubernetes mounts secrets
 * 0644 by default, Docker secrets 0444, inside a container whose only user is the server), and refusing would break
 * them while protecting nothing there. On a shared machine the warning says what to do. A file that users other than
 * its owner and group can <em>write</em> is refused for {@code serve}: anyone could add a token of their own and be
 * let in.
 */
final class TokenFile {
    /** A token file larger than this is not a token file. */
    private static final long MAX_BYTES = 64 * 1024;

    private TokenFile() {}

    /**
     * Checks who else may read or write the file: warns when group or others may read or write it (through {@code
     * warn}), refuses when others may write it and the file says who may use a server.
     *
     * @param file the token file
     * @param serving whether the file lists the tokens a server accepts ({@code serve}), not one a client sends
     * @param warn receives a warning, without the {@code sandbox: } prefix
     * @throws UsageException for a file others may write, when serving
     */
    static void checkAccess(Path file, boolean serving, Consumer<String> warn) throws UsageException {
        Set<PosixFilePermission> mode;
        try {
            mode = Files.getPosixFilePermissions(file);
        } catch (UnsupportedOperationException | IOException e) {
            return; // not a POSIX file system, or a missing file: reading it says so
        }
        String octal = octal(mode);
        if (serving && mode.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new UsageException("--token-file '" + file + "' can be changed by every user (mode " + octal
                    + "): anyone could add a token and use the server; run chmod 600 '" + file + "'");
        }
        boolean others = mode.contains(PosixFilePermission.OTHERS_READ)
                || mode.contains(PosixFilePermission.OTHERS_WRITE)
                || mode.contains(PosixFilePermission.GROUP_READ)
                || mode.contains(PosixFilePermission.GROUP_WRITE);
        if (others) {
            warn.accept("warning: --token-file '" + file + "' can be read by other users (mode " + octal
                    + "), and whoever reads it can use the server's sessions; run chmod 600 '" + file + "'");
        }
    }

    static char[] read(Path file) throws UsageException {
        byte[] bytes;
        try {
            if (Files.isDirectory(file)) {
                throw new UsageException("--token-file '" + file + "' is a directory, not a file");
            }
            if (Files.size(file) > MAX_BYTES) {
                throw new UsageException(
                        "--token-file '" + file + "' is larger than " + MAX_BYTES + " bytes: not a token file");
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new UsageException("--token-file '" + file + "' was not found");
        } catch (AccessDeniedException e) {
            throw new UsageException("cannot read --token-file '" + file + "': permission denied");
        } catch (IOException e) {
            throw new UsageException("cannot read --token-file '" + file + "': " + e.getMessage());
        }
        CharBuffer chars = StandardCharsets.UTF_8.decode(ByteBuffer.wrap(bytes));
        Arrays.fill(bytes, (byte) 0);
        int start = 0;
        int end = chars.limit();
        while (start < end && Character.isWhitespace(chars.get(start))) {
            start++;
        }
        while (end > start && Character.isWhitespace(chars.get(end - 1))) {
            end--;
        }
        if (start == end) {
            throw new UsageException("--token-file '" + file + "' is empty");
        }
        char[] token = new char[end - start];
        chars.position(start);
        chars.get(token);
        Arrays.fill(chars.array(), '\0');
        return token;
    }

    private static String octal(Set<PosixFilePermission> mode) {
        int bits = 0;
        for (PosixFilePermission p : mode) {
            bits |= 1 << (8 - p.ordinal());
        }
        return String.format("0%03o", bits);
    }
}
