package dev.sandbox.samples.cli;

import dev.sandbox.FileInfo;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.time.temporal.ChronoUnit;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sandbox ls-files}: one line per entry of a session's directory (or for the one file named), in name order:
 * type and mode as {@code ls -l} shows them (setuid, setgid and sticky as {@code s}, {@code t}), owner and group (names
 * where the provider resolves them, else the numeric ids), size in bytes, modification time (UTC), name, and a
 * symbolic link's target. With {@code --depth N} subdirectories are listed too, to that depth, in pre-order, each
 * entry named by its path below the listed directory.
 *
 * <pre>
 * drwxr-xr-x alice    staff           4096 2025-01-31T10:15:00Z data
 * -rwsr-xr-x root     root             120 2025-01-31T10:15:02Z tool
 * lrwxrwxrwx 1000     1000               9 2025-01-31T10:15:03Z latest -&gt; notes.txt
 * </pre>
 */
@Command(
        name = "ls-files",
        customSynopsis = "sandbox ls-files [PROVIDER] SESSION:PATH",
        description = {
            "Lists directory PATH of session SESSION (SESSION: for its workdir), or describes file PATH: type, mode,"
                    + " owner, group, size, modification time, name."
        })
final class ListFilesCommand extends SessionSubcommand {
    @Parameters(
            paramLabel = "SESSION:PATH",
            converter = Location.InSession.class,
            description = "the session and the path in it")
    Location location;

    @Option(
            names = "--depth",
            paramLabel = "N",
            defaultValue = "1",
            description = "list subdirectories too, N levels deep (1: the directory's entries; at most 64)")
    int depth;

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
        boolean dir = info.type() == FileInfo.Type.DIRECTORY;
        List<FileInfo> entries = dir ? client.files().list(path, depth) : List.of(info);
        String prefix = info.path().endsWith("/") ? info.path() : info.path() + "/";
        for (FileInfo entry : entries) {
            boolean below = dir && depth > 1 && entry.path().startsWith(prefix);
            out.println(line(entry, below ? entry.path().substring(prefix.length()) : entry.name()));
        }
        out.flush();
        return 0;
    }

    static String line(FileInfo info) {
        return line(info, info.name());
    }

    static String line(FileInfo info, String shownName) {
        String link = info.symlinkTarget().map(t -> " -> " + t).orElse("");
        return String.format(
                "%s %-8s %-8s %11d %s %s%s",
                info.modeString(),
                info.owner().orElse(id(info.uid())),
                info.group().orElse(id(info.gid())),
                info.size(),
                info.modifiedAt().truncatedTo(ChronoUnit.SECONDS),
                shownName,
                link);
    }

    private static String id(long id) {
        return id < 0 ? "?" : Long.toString(id);
    }
}
