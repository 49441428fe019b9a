package dev.sandbox.samples.cli;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.blocking.FileClient;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.blocking.TransferListener;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sandbox cp}: uploads a local file into a session or downloads one from it, streaming (never the whole file
 * in memory); with {@code -r}, a directory and everything in it. As with {@code cp}, a target that is a directory gets
 * the source's name. Prints nothing on success, except progress on standard error when that is a terminal.
 */
@Command(
        name = "cp",
        customSynopsis = "sandbox cp [PROVIDER] [-r] SRC DST",
        description = {
            "Copies a file between this machine and a session; one of SRC and DST is SESSION:PATH (a relative PATH"
                    + " is in the session's workdir), the other a local path (write ./a:b for a local name with a"
                    + " colon); a DST that is a directory gets SRC's file name. With -r, SRC may be a directory:"
                    + " it is copied with everything in it (a downloaded tree is checked: nothing is written outside"
                    + " DST, links that lead out of it are refused). Progress goes to stderr when it is a terminal."
        })
final class CopyCommand extends SessionSubcommand {
    @Parameters(index = "0", paramLabel = "SRC", converter = Location.Any.class, description = "where to copy from")
    Location source;

    @Parameters(index = "1", paramLabel = "DST", converter = Location.Any.class, description = "where to copy to")
    Location target;

    @Option(
            names = {"-r", "--recursive"},
            description = "copy a directory and everything in it")
    boolean recursive;

    @Override
    void validate() {
        super.validate();
        if (source.inSession() == target.inSession()) {
            throw usageError("sandbox cp copies between this machine and a session: one of SRC and DST must be "
                    + (source.inSession() ? "a local path" : "SESSION:PATH"));
        }
    }

    /** The session the copy involves. */
    String session() {
        return source.inSession() ? source.session() : target.session();
    }

    @Override
    int execute() throws UsageException {
        try (SessionSource sessions = sessions();
                SandboxClient client = sessions.attach(session(), SandboxClient.DEFAULT_TIMEOUT)) {
            return run(client);
        }
    }

    int run(SandboxClient client) {
        return run(client, System.err, Tty.stderrIsTerminal());
    }

    /**
     * Copies.
     *
     * @param client the session's client
     * @param err where progress goes
     * @param progress whether to show progress
     * @return the exit code
     */
    int run(SandboxClient client, PrintStream err, boolean progress) {
        FileClient files = client.files();
        ProgressLine line = progress ? new ProgressLine(err) : null;
        if (source.inSession()) {
            String remote = source.path();
            Path local = Path.of(target.path());
            boolean tree = isDirectory(files, remote);
            if (tree && !recursive) {
                throw isADirectory(remote);
            }
            if (Files.isDirectory(local)) {
                local = local.resolve(fileName(remote));
            }
            files.download(remote, local, line);
        } else {
            Path local = Path.of(source.path());
            String remote = target.path();
            if (Files.isDirectory(local, LinkOption.NOFOLLOW_LINKS) && !recursive) {
                throw isADirectory(local.toString());
            }
            if (remote.endsWith("/") || isDirectory(files, remote)) {
                remote = (remote.endsWith("/") ? remote : remote + "/")
                        + local.toAbsolutePath().normalize().getFileName();
            }
            files.upload(local, remote, line);
        }
        if (line != null) {
            line.end();
        }
        return 0;
    }

    private static FileOperationException isADirectory(String path) {
        return new FileOperationException(
                path,
                FileOperationException.Reason.IS_A_DIRECTORY,
                path + ": is a directory (copy it with cp -r)",
                null);
    }

    /** One line of progress on a terminal, rewritten in place at most ten times a second. */
    static final class ProgressLine implements TransferListener {
        private static final long EVERY_NANOS = 100_000_000L;
        private final PrintStream err;
        private long entries = -1;
        private long last;
        private boolean shown;

        ProgressLine(PrintStream err) {
            this.err = err;
        }

        @Override
        public void entries(long done, long total) {
            entries = done;
        }

        @Override
        public void progress(long done, long total) {
            long now = System.nanoTime();
            boolean end = done == total;
            if (!end && shown && now - last < EVERY_NANOS) {
                return;
            }
            last = now;
            shown = true;
            String bytes = total >= 0 && !end ? size(done) + " of " + size(total) : size(done);
            err.print("\r" + (entries >= 0 ? entries + (entries == 1 ? " entry, " : " entries, ") : "") + bytes
                    + "\u001b[K");
            err.flush();
        }

        void end() {
            if (shown) {
                err.print("\n");
                err.flush();
            }
        }

        static String size(long bytes) {
            if (bytes < 1024) {
                return bytes + " B";
            }
            if (bytes < 1024 * 1024) {
                return String.format(java.util.Locale.ROOT, "%.1f KiB", bytes / 1024.0);
            }
            return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
        }
    }

    private static boolean isDirectory(FileClient fs, String path) {
        try {
            return fs.stat(path).type() == FileInfo.Type.DIRECTORY;
        } catch (FileOperationException e) {
            if (e.reason() == FileOperationException.Reason.NOT_FOUND) {
                return false;
            }
            throw e;
        }
    }

    private static String fileName(String path) {
        String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        return trimmed.substring(trimmed.lastIndexOf('/') + 1);
    }
}
