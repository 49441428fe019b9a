package dev.sandbox.samples.cli;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.blocking.FileClient;
import dev.sandbox.blocking.SandboxClient;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code sandbox cp}: uploads a local file into the client's session or downloads one from it, streaming (never the
 * whole file in memory). As with {@code cp}, a target that is a directory gets the source's file name. Prints nothing
 * on success.
 */
final class CopyCommand {
    private CopyCommand() {}

    static int run(SandboxClient client, CommandLine.Copy copy) {
        FileClient files = client.files();
        if (copy.source().inSession()) {
            String remote = copy.source().path();
            Path local = Path.of(copy.target().path());
            if (Files.isDirectory(local)) {
                local = local.resolve(fileName(remote));
            }
            files.download(remote, local);
        } else {
            Path local = Path.of(copy.source().path());
            String remote = copy.target().path();
            if (remote.endsWith("/") || isDirectory(files, remote)) {
                remote = (remote.endsWith("/") ? remote : remote + "/") + local.getFileName();
            }
            files.upload(local, remote);
        }
        return 0;
    }

    private static boolean isDirectory(FileClient files, String path) {
        try {
            return files.stat(path).type() == FileInfo.Type.DIRECTORY;
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
