package dev.sandbox.samples.cli;

import dev.sandbox.FileInfo;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.time.temporal.ChronoUnit;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

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
@Command(
        name = "ls-files",
        customSynopsis = "sandbox ls-files [PROVIDER] SESSION:PATH",
        description = {
            "Lists directory PATH of session SESSION (SESSION: for its workdir), or describes file PATH: type, mode,"
                    + " size, modification time, name."
        })
final class ListFilesCommand extends SessionSubcommand {
    @Parameters(
            paramLabel = "SESSION:PATH",
            converter = Location.InSession.class,
            description = "the session and the path in it")
    Location location;

    @Override
    int execute() throws UsageException {
        try (SessionSource sessions = sessions();
                SandboxClient client = sessions.attach(location.session(), SandboxClient.DEFAULT_TIMEOUT)) {
            return run(client, cli.out);
        }
    }

    int run(SandboxClient client, PrintStream out) {
        String path = location.path();
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
