package dev.sandbox.implementation.local;

import dev.sandbox.implementation.files.LocalFileIo;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.StandardOpenOption;

/**
 * Where a write's temporary file goes in a {@link SessionRoot}: beside the target, every operation relative to the
 * parent directory's descriptor, so nothing is resolved again by name (see {@link SessionRoot#destination}).
 */
final class RootDestination implements LocalFileIo.Destination {
    private final SessionRoot.Parent parent;

    RootDestination(SessionRoot.Parent parent) {
        this.parent = parent;
    }

    @Override
    public String targetName() {
        return parent.name();
    }

    @Override
    public FileChannel createTemp(String tempName) throws IOException {
        // one component after the directory's descriptor, created exclusively: O_EXCL never follows a link
        return FileChannel.open(
                SessionRoot.proc(parent.fd()).resolve(tempName),
                StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS);
    }

    @Override
    public void replaceTarget(String tempName) throws IOException {
        if (Sys.renameat(parent.fd(), Sys.path(tempName), parent.fd(), Sys.path(parent.name())) < 0) {
            int errno = Sys.errno();
            throw new IOException(Sys.strerror(errno) + (errno == Sys.EISDIR ? " (Is a directory)" : ""));
        }
    }

    @Override
    public void deleteTemp(String tempName) {
        Sys.unlinkat(parent.fd(), Sys.path(tempName), 0);
    }

    @Override
    public boolean targetExists() {
        return SessionRoot.statx(parent.fd(), parent.name(), Sys.AT_SYMLINK_NOFOLLOW) != null;
    }

    @Override
    public void renameTemp(String from, String to) throws IOException {
        if (Sys.renameat(parent.fd(), Sys.path(from), parent.fd(), Sys.path(to)) < 0) {
            throw new IOException(Sys.strerror(Sys.errno()));
        }
    }

    @Override
    public void close() {
        parent.close();
    }
}
