package dev.sandbox.implementation.docker;

import dev.sandbox.InvalidArgumentException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;
import java.util.regex.Pattern;

/**
 * Labels added to Docker sessions after their create, kept in the reaper's state as one small file per session
 * ({@code labels/<session>}): a container's own labels cannot change once it exists. The providers write these files
 * through the daemon's archive API and read them back beside the containers' labels when they list or attach; a
 * sandbox cannot reach them (the reaper's volume is mounted in no session). The reaper deletes a file ten minutes
 * after its session is gone, as it does the deadlines and leases.
 *
 * <p>A file is lines of {@code key=value}, both percent-encoded (UTF-8), so that it is plain ASCII whatever the labels
 * hold. What is read back is bounded and checked all the same: the state volume is the daemon's, and another program
 * with the daemon's socket could write there. Internal: not part of the public API.
 */
final class ReaperLabels {
    /** The state directory of the label files. */
    static final String DIR = "labels";
    /** The largest label file written or read. */
    static final int MAX_FILE = 64 * 1024;
    /** The most bytes read from the state's archive of every label file. */
    static final long MAX_ARCHIVE = 16L * 1024 * 1024;

    private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

    private ReaperLabels() {}

    /**
     * A session's labels as the file's text (without the final newline).
     *
     * @param labels the user's labels
     * @return the text
     * @throws InvalidArgumentException when the labels do not fit in {@value #MAX_FILE} bytes
     */
    static String encode(Map<String, String> labels) {
        StringJoiner lines = new StringJoiner("\n");
        labels.forEach((k, v) -> lines.add(
                URLEncoder.encode(k, StandardCharsets.UTF_8) + "=" + URLEncoder.encode(v, StandardCharsets.UTF_8)));
        String text = lines.toString();
        if (text.length() + 1 > MAX_FILE) {
            throw new InvalidArgumentException(
                    "labels",
                    "a Docker session's labels must fit in " + MAX_FILE + " bytes once encoded, got " + text.length());
        }
        return text;
    }

    /**
     * The labels in one file's text; lines that do not parse and keys of the provider's own are dropped.
     *
     * @param text the file's text
     * @return the labels
     */
    static Map<String, String> decode(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : text.split("\n", -1)) {
            int eq = line.indexOf('=');
            if (eq <= 0) {
                continue;
            }
            try {
                String key = URLDecoder.decode(line.substring(0, eq), StandardCharsets.UTF_8);
                String value = URLDecoder.decode(line.substring(eq + 1), StandardCharsets.UTF_8);
                if (!key.isEmpty() && !key.startsWith(DockerControl.INTERNAL_PREFIX)) {
                    out.put(key, value);
                }
            } catch (IllegalArgumentException e) {
                // a malformed escape: not a line this SDK wrote
            }
        }
        return out;
    }

    /**
     * Reads the archive of the {@code labels} directory the daemon sends: every session's file, by session id.
     * Entries that are not plain files named {@code labels/<session id>} of at most {@value #MAX_FILE} bytes are
     * skipped; reading stops after {@value #MAX_ARCHIVE} bytes or at anything that is not a tar header.
     *
     * @param tar the archive
     * @return labels by session id
     * @throws IOException when the stream fails
     */
    static Map<String, Map<String, String>> readArchive(InputStream tar) throws IOException {
        Map<String, Map<String, String>> out = new LinkedHashMap<>();
        long read = 0;
        while (read + TarStream.BLOCK <= MAX_ARCHIVE) {
            byte[] header = tar.readNBytes(TarStream.BLOCK);
            read += header.length;
            if (header.length < TarStream.BLOCK || allZero(header)) {
                break;
            }
            if (!checksumMatches(header)) {
                break;
            }
            String name = field(header, 0, 100);
            long size = octal(header, 124, 12);
            if (size < 0) {
                break;
            }
            char type = (char) header[156];
            long padded = (size + TarStream.BLOCK - 1) / TarStream.BLOCK * TarStream.BLOCK;
            if (read + padded > MAX_ARCHIVE) {
                break;
            }
            String id = name.startsWith(DIR + "/") ? name.substring(DIR.length() + 1) : "";
            if ((type == '0' || type == 0)
                    && size <= MAX_FILE
                    && SESSION_ID.matcher(id).matches()) {
                byte[] content = tar.readNBytes((int) size);
                tar.skipNBytes(padded - size);
                read += padded;
                if (content.length == size) {
                    out.put(id, decode(new String(content, StandardCharsets.US_ASCII).strip()));
                }
            } else {
                tar.skipNBytes(padded);
                read += padded;
            }
        }
        return Collections.unmodifiableMap(out);
    }

    private static boolean allZero(byte[] block) {
        for (byte b : block) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean checksumMatches(byte[] header) {
        long stored = octal(header, 148, 8);
        long sum = 0;
        for (int i = 0; i < TarStream.BLOCK; i++) {
            sum += i >= 148 && i < 156 ? ' ' : header[i] & 0xff;
        }
        return stored == sum;
    }

    private static String field(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.US_ASCII);
    }

    /** An octal number field, or -1 when it is not one. */
    private static long octal(byte[] header, int offset, int length) {
        String text = field(header, offset, length).trim();
        if (text.isEmpty() || text.length() > 11) {
            return text.isEmpty() ? 0 : -1;
        }
        long value = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '7') {
                return -1;
            }
            value = value * 8 + (c - '0');
        }
        return value;
    }
}
