package dev.sandbox.samples.cli;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.blocking.FileClient;
import dev.sandbox.blocking.SandboxClient;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code sandbox cp}: uploads a local file into a session or downloads one from it, streaming (never the whole file
 * in memory). As with {@code cp}, a target that is a directory gets the source's file name. Prints nothing on success.
 */
@Command(
        name = "cp",
        customSynopsis = "sandbox cp [PROVIDER] SRC DST",
        description = {
            "Copies a file between this machine and a session; one of SRC and DST is SESSION:PATH (a relative PATH"
                    + " is in the session's workdir), the other a local path (write ./a:b for a local name with a"
                    + " colon); a DST that is a directory gets SRC's file name."
        })
final class CopyCommand extends SessionSubcommand {
    @Parameters(index = "0", paramLabel = "SRC", converter = Location.Any.class, description = "where to copy from")
    Location source;

    @Parameters(index = "1", paramLabel = "DST", converter = Location.Any.class, description = "where to copy to")
    Location target;

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
        FileClient files = client.files();
        if (source.inSession()) {
            String remote = source.path();
            Path local = Path.of(target.path());
            if (Files.isDirectory(local)) {
                local = local.resolve(fileName(remote));
            }
            files.download(remote, local);
        } else {
            Path local = Path.of(source.path());
            String remote = target.path();
            if (remote.endsWith("/") || isDirectory(files, remote)) {
                remote = (remote.endsWith("/") ? remote : remote + "/") + local.getFileName();
            }
            files.upload(local, remote);
        }
        return 0;
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
