package dev.sandbox.samples.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads a bearer token from a file: its content without surrounding whitespace (a trailing newline is common).
 */
final class TokenFile {
    /** A token file larger than this is not a token file. */
    private static final long MAX_BYTES = 64 * 1024;

    private TokenFile() {}

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
}
