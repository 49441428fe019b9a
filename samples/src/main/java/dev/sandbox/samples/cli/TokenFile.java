package dev.sandbox.samples.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/** Reads a bearer token from a file: its content without surrounding whitespace (a trailing newline is common). */
final class TokenFile {
    private TokenFile() {}

    static char[] read(Path file) throws UsageException {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
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
