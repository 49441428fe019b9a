package dev.sandbox.samples.cli;

import dev.sandbox.FileInfo;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * {@code sandbox ls-files}: one line per entry of a session's directory (or for the one file named), in name order:
 * type and mode as {@code ls -l} shows them, size in bytes, modification time (UTC), name, and a symbolic link's
 * target.
 *
 * <pre>
 * drwxr-xr-x        4096 2025-01-31T10:15:00Z data
 * -rw-r--r--         120 2025-01-31T10:15:02Z notes.txt
 * lrwxrwxrwx           9 2025-01-31T10:15:03Z latest -&gt; notes.txt
 * </pre>
 */
final class ListFilesCommand {
    private ListFilesCommand() {}

    static int run(SandboxClient client, CommandLine.ListFiles ls, PrintStream out) {
        String path = ls.location().path();
        FileInfo info = client.files().stat(path);
        List<FileInfo> entries =
                info.type() == FileInfo.Type.DIRECTORY ? client.files().list(path) : List.of(info);
        for (FileInfo entry : entries) {
            out.println(line(entry));
        }
        out.flush();
        return 0;
    }

    static String line(FileInfo info) {
        String link = info.symlinkTarget().map(t -> " -> " + t).orElse("");
        return String.format(
                "%s %11d %s %s%s",
                typeAndMode(info), info.size(), info.modifiedAt().truncatedTo(ChronoUnit.SECONDS), info.name(), link);
    }

    static String typeAndMode(FileInfo info) {
        StringBuilder s = new StringBuilder(10);
        s.append(
                switch (info.type()) {
                    case DIRECTORY -> 'd';
                    case SYMLINK -> 'l';
                    case FILE -> '-';
                    case OTHER -> '?';
                });
        String letters = "rwxrwxrwx";
        for (int bit = 8; bit >= 0; bit--) {
            s.append((info.mode() & (1 << bit)) != 0 ? letters.charAt(8 - bit) : '-');
        }
        return s.toString();
    }
}
