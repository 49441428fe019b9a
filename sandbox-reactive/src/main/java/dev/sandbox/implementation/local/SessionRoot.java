package dev.sandbox.implementation.local;

import com.sun.jna.Memory;
import dev.sandbox.BackendException;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.implementation.files.FileArguments;
import dev.sandbox.implementation.files.IdNames;
import dev.sandbox.implementation.files.LocalFileIo;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * A session root held open as a directory descriptor, and every file operation of the files API done relative to
 * it, so that no path is checked and then re-resolved (no window for a symbolic link swapped in between).
 *
 * <p>A caller's path is first mapped lexically onto the root ({@code ..} and absolute paths that leave it are refused
 * outright), then resolved by the kernel from the root descriptor with {@code openat2(2)} and {@code RESOLVE_BENEATH
 * | RESOLVE_NO_MAGICLINKS}: symbolic links inside the root are followed as long as they stay beneath it; one that is
 * absolute, or climbs out with {@code ..}, is refused ({@code EXDEV}), as are {@code /proc} magic links. Where
 * {@code openat2} is missing ({@code ENOSYS}, Linux before 5.6) the same walk is done one component at a time with
 * {@code openat(..., O_PATH | O_NOFOLLOW)}, reading each symbolic link and following it by hand under the same
 * rules. {@code RESOLVE_NO_SYMLINKS} is not used: links inside the root keep working, as the files API always
 * allowed.
 *
 * <p>The last component is then used relative to its parent's descriptor ({@code statx}, {@code mkdirat}, {@code
 * unlinkat}, {@code renameat2}, and {@code O_CREAT | O_EXCL} for a write's temporary file, none of which follow a
 * final link). Data moves through a {@link FileChannel} opened on {@code /proc/self/fd/N} of the resolved
 * descriptor: that reopens the very file the descriptor holds, it resolves nothing again.
 *
 * <p>A regular file with more than one hard link is refused for reading ({@link
 * FileOperationException.Reason#PERMISSION_DENIED}): a hard link inside the root may be the same file as one outside,
 * and nothing tells which name is the original. Writes replace the directory entry (a new file renamed over it), so
 * they never reach the other names of a hard-linked file and are allowed. So is anything not a regular file or
 * directory refused for reading (a FIFO would block the reader).
 */
final class SessionRoot implements AutoCloseable {
    private static final int MAX_LINKS = 40;
    private static final int MAX_DEPTH = 512;
    private static final int EAGAIN_RETRIES = 16;

    /** Whether the kernel has {@code openat2}; probed once. */
    static final boolean OPENAT2 = probeOpenat2();

    /** For tests: resolve by the component-by-component fallback even where {@code openat2} exists. */
    static volatile boolean forceFallback;

    private final Path root;
    private final int rootFd;
    private int users; // guarded by this
    private boolean closed; // guarded by this
    private volatile Runnable onRelease = () -> {};

    /** @param root the session's workdir */
    SessionRoot(Path root) {
        this.root = root;
        this.rootFd =
                Sys.openat(Sys.AT_FDCWD, Sys.path(root.toString()), Sys.O_PATH | Sys.O_DIRECTORY | Sys.O_CLOEXEC, 0);
        if (rootFd < 0) {
            int errno = Sys.errno();
            throw new BackendException("cannot open the session root '" + root + "': " + Sys.strerror(errno), null);
        }
    }

    Path root() {
        return root;
    }

    /**
     * Marks the start of an operation: the root descriptor stays open until it ends, so that a destroy racing it
     * cannot let the number be reused for another file.
     *
     * @return false once the root is closed
     */
    synchronized boolean acquire() {
        if (closed) {
            return false;
        }
        users++;
        return true;
    }

    /** How many file operations run now (the session is not idle while one does); 0 once closed. */
    synchronized int inFlight() {
        return closed ? 0 : users;
    }

    /**
     * What to do at the end of every operation (the session notes activity: an operation is activity until it ends).
     *
     * @param action run after each release, outside the lock
     */
    void onRelease(Runnable action) {
        this.onRelease = action;
    }

    /** Marks the end of an operation {@link #acquire()} let start. */
    void release() {
        synchronized (this) {
            if (--users == 0 && closed) {
                Sys.close(rootFd);
            }
        }
        onRelease.run();
    }

    /** Closes the root descriptor once the operations in flight end. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            if (users == 0) {
                Sys.close(rootFd);
            }
        }
    }

    private static boolean probeOpenat2() {
        try (Memory how = new Memory(Sys.OPEN_HOW_SIZE)) {
            how.clear();
            how.setLong(0, Sys.O_PATH | Sys.O_CLOEXEC);
            how.setLong(16, Sys.RESOLVE_BENEATH);
            long fd = Sys.syscall(Sys.SYS_OPENAT2, Sys.AT_FDCWD, pathMemory("."), how, Sys.OPEN_HOW_SIZE);
            if (fd >= 0) {
                Sys.close((int) fd);
                return true;
            }
            return Sys.errno() != Sys.ENOSYS && Sys.errno() != Sys.EPERM; // EPERM: a seccomp filter that denies it
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            return false;
        }
    }

    private static Memory pathMemory(String path) {
        byte[] z = Sys.path(path);
        Memory m = new Memory(z.length);
        m.write(0, z, 0, z.length);
        return m;
    }

    static Path proc(int fd) {
        return Path.of("/proc/self/fd/" + fd);
    }

    // ---- mapping a caller's path onto the root ----

    /** A caller's path relative to the root, lexically normalised; {@code ""} is the root itself. */
    String relative(String field, String path) {
        if (path == null || path.isEmpty()) {
            throw new InvalidArgumentException(field, field + " must not be empty");
        }
        if (path.indexOf('\0') >= 0) {
            throw new InvalidArgumentException(
                    field, field + " contains a NUL byte: '" + path.replace("\0", "\\0") + "'");
        }
        Path p = root.resolve(path).normalize();
        if (!p.startsWith(root)) {
            throw escapes(field, path);
        }
        return root.relativize(p).toString();
    }

    Path display(String rel) {
        return rel.isEmpty() ? root : root.resolve(rel);
    }

    InvalidArgumentException escapes(String field, String path) {
        return new InvalidArgumentException(
                field, field + " '" + path + "' is outside the session root '" + root + "'");
    }

    private RuntimeException fail(String field, String shown, int errno) {
        FileOperationException.Reason reason;
        switch (errno) {
            case Sys.EXDEV -> {
                return escapes(field, shown);
            }
            case Sys.ENOENT -> reason = FileOperationException.Reason.NOT_FOUND;
            case Sys.ENOTDIR -> reason = FileOperationException.Reason.NOT_A_DIRECTORY;
            case Sys.EISDIR -> reason = FileOperationException.Reason.IS_A_DIRECTORY;
            case Sys.EEXIST -> reason = FileOperationException.Reason.ALREADY_EXISTS;
            case Sys.ENOTEMPTY -> reason = FileOperationException.Reason.DIRECTORY_NOT_EMPTY;
            case Sys.EACCES, Sys.EPERM -> reason = FileOperationException.Reason.PERMISSION_DENIED;
            case Sys.ENOSPC -> reason = FileOperationException.Reason.DISK_FULL;
            default -> {
                return new FileOperationException(
                        shown, FileOperationException.Reason.IO_ERROR, shown + ": " + Sys.strerror(errno), null);
            }
        }
        return LocalFileIo.failure(shown, reason, null);
    }

    // ---- resolution ----

    /**
     * Opens a path beneath the root, following symbolic links that stay beneath it.
     *
     * @param flags {@code O_PATH}, maybe with {@code O_DIRECTORY}
     * @return the descriptor, the caller's to close
     */
    int open(String field, String shown, String rel, int flags) {
        String p = rel.isEmpty() ? "." : rel;
        if (OPENAT2 && !forceFallback) {
            return openat2(field, shown, rootFd, p, flags);
        }
        return walk(field, shown, p, flags);
    }

    /** Per-thread native scratch: an {@code open_how} and a {@code statx} buffer (allocating each call costs more). */
    private static final ThreadLocal<Memory> HOW = ThreadLocal.withInitial(() -> new Memory(Sys.OPEN_HOW_SIZE));

    private static final ThreadLocal<Memory> STATX = ThreadLocal.withInitial(() -> new Memory(Sys.STATX_SIZE));

    private int openat2(String field, String shown, int dirFd, String path, int flags) {
        Memory how = HOW.get();
        how.setLong(0, flags | Sys.O_CLOEXEC);
        how.setLong(8, 0);
        how.setLong(16, Sys.RESOLVE_BENEATH | Sys.RESOLVE_NO_MAGICLINKS);
        byte[] name = Sys.path(path);
        for (int attempt = 0; ; attempt++) {
            long fd = Sys.syscall(Sys.SYS_OPENAT2, dirFd, name, how, Sys.OPEN_HOW_SIZE);
            if (fd >= 0) {
                return (int) fd;
            }
            int errno = Sys.errno();
            // EAGAIN: a rename elsewhere raced a ".." of a link; the kernel asks for a retry
            if ((errno != Sys.EAGAIN && errno != Sys.EINTR) || attempt >= EAGAIN_RETRIES) {
                throw fail(field, shown, errno);
            }
        }
    }

    /** The fallback: one component at a time from the root, each opened without following, links read by hand. */
    private int walk(String field, String shown, String path, int flags) {
        Deque<String> todo = new ArrayDeque<>();
        Collections.addAll(todo, path.split("/"));
        Deque<Integer> opened = new ArrayDeque<>(); // beneath the root, innermost first
        int links = 0;
        try {
            while (!todo.isEmpty()) {
                String c = todo.pop();
                if (c.isEmpty() || c.equals(".")) {
                    continue;
                }
                if (c.equals("..")) {
                    if (opened.isEmpty()) {
                        throw escapes(field, shown);
                    }
                    Sys.close(opened.pop());
                    continue;
                }
                int dir = opened.isEmpty() ? rootFd : opened.peek();
                int fd = Sys.openat(dir, Sys.path(c), Sys.O_PATH | Sys.O_NOFOLLOW | Sys.O_CLOEXEC, 0);
                if (fd < 0) {
                    throw fail(field, shown, Sys.errno());
                }
                int type = modeOf(fd, "", Sys.AT_EMPTY_PATH | Sys.AT_SYMLINK_NOFOLLOW, field, shown) & Sys.S_IFMT;
                if (type == Sys.S_IFLNK) {
                    String target = readlink(fd, "");
                    Sys.close(fd);
                    if (++links > MAX_LINKS) {
                        throw fail(field, shown, Sys.ELOOP);
                    }
                    if (target == null || target.startsWith("/")) {
                        throw escapes(field, shown);
                    }
                    String[] parts = target.split("/");
                    for (int i = parts.length - 1; i >= 0; i--) {
                        todo.push(parts[i]);
                    }
                    continue;
                }
                if (type != Sys.S_IFDIR && !todo.isEmpty()) {
                    Sys.close(fd);
                    throw fail(field, shown, Sys.ENOTDIR);
                }
                opened.push(fd);
            }
            int last = opened.isEmpty() ? rootFd : opened.peek();
            if ((flags & Sys.O_DIRECTORY) != 0
                    && (modeOf(last, "", Sys.AT_EMPTY_PATH, field, shown) & Sys.S_IFMT) != Sys.S_IFDIR) {
                throw fail(field, shown, Sys.ENOTDIR);
            }
            if (opened.isEmpty()) {
                int fd = Sys.openat(rootFd, Sys.path("."), Sys.O_PATH | Sys.O_DIRECTORY | Sys.O_CLOEXEC, 0);
                if (fd < 0) {
                    throw fail(field, shown, Sys.errno());
                }
                return fd;
            }
            return opened.pop();
        } finally {
            for (int fd : opened) {
                Sys.close(fd);
            }
        }
    }

    private static String readlink(int dirFd, String name) {
        byte[] buf = new byte[4096];
        long n = Sys.readlinkat(dirFd, Sys.path(name), buf, buf.length);
        return n < 0 || n >= buf.length ? null : new String(buf, 0, (int) n, StandardCharsets.UTF_8);
    }

    /** The parent directory of a path, open, and the last component; the caller closes {@link Parent#fd}. */
    record Parent(int fd, String name, String rel) implements AutoCloseable {
        @Override
        public void close() {
            Sys.close(fd);
        }
    }

    Parent parent(String field, String shown, String rel) {
        if (rel.isEmpty()) {
            throw new IllegalArgumentException("the root has no parent");
        }
        int slash = rel.lastIndexOf('/');
        String dir = slash < 0 ? "" : rel.substring(0, slash);
        return new Parent(open(field, shown, dir, Sys.O_PATH | Sys.O_DIRECTORY), rel.substring(slash + 1), rel);
    }

    // ---- stat ----

    /** What {@code statx} tells of an entry. */
    record Stat(int mode, long nlink, long size, Instant mtime, long uid, long gid) {
        int type() {
            return mode & Sys.S_IFMT;
        }
    }

    private static Stat statx(int dirFd, String name, int flags) {
        Memory buf = STATX.get();
        if (Sys.statx(dirFd, Sys.path(name), flags, Sys.STATX_BASIC_STATS, buf) < 0) {
            return null;
        }
        return new Stat(
                buf.getShort(Sys.STATX_MODE_OFFSET) & 0xffff,
                buf.getInt(Sys.STATX_NLINK_OFFSET) & 0xffffffffL,
                buf.getLong(Sys.STATX_SIZE_OFFSET),
                Instant.ofEpochSecond(
                        buf.getLong(Sys.STATX_MTIME_OFFSET), buf.getInt(Sys.STATX_MTIME_OFFSET + 8) & 0xffffffffL),
                buf.getInt(Sys.STATX_UID_OFFSET) & 0xffffffffL,
                buf.getInt(Sys.STATX_GID_OFFSET) & 0xffffffffL);
    }

    private Stat stat(int dirFd, String name, int flags, String field, String shown) {
        Stat st = statx(dirFd, name, flags);
        if (st == null) {
            throw fail(field, shown, Sys.errno());
        }
        return st;
    }

    private int modeOf(int dirFd, String name, int flags, String field, String shown) {
        return stat(dirFd, name, flags, field, shown).mode();
    }

    /** The entry itself (a final link is not followed). */
    FileInfo info(String field, String shown, String rel) {
        if (rel.isEmpty()) {
            return info(rootFd, "", root, field, shown);
        }
        try (Parent parent = parent(field, shown, rel)) {
            return info(parent.fd(), parent.name(), display(rel), field, shown);
        }
    }

    private FileInfo info(int dirFd, String name, Path display, String field, String shown) {
        int flags = Sys.AT_SYMLINK_NOFOLLOW | (name.isEmpty() ? Sys.AT_EMPTY_PATH : 0);
        Stat st = stat(dirFd, name, flags, field, shown);
        FileInfo.Type type = switch (st.type()) {
            case Sys.S_IFLNK -> FileInfo.Type.SYMLINK;
            case Sys.S_IFDIR -> FileInfo.Type.DIRECTORY;
            case Sys.S_IFREG -> FileInfo.Type.FILE;
            default -> FileInfo.Type.OTHER;
        };
        Optional<String> target =
                type == FileInfo.Type.SYMLINK ? Optional.ofNullable(readlink(dirFd, name)) : Optional.empty();
        Path fileName = display.getFileName();
        return new FileInfo(
                display.toString(),
                fileName == null ? "/" : fileName.toString(),
                type,
                st.size(),
                st.mode() & 07777,
                st.mtime(),
                target,
                st.uid(),
                st.gid(),
                IdNames.HOST.user(st.uid()),
                IdNames.HOST.group(st.gid()));
    }

    // ---- operations ----

    /**
     * Opens a regular file for reading: a directory, a file with more than one hard link, or anything else that is
     * not a regular file is refused.
     */
    FileChannel openRead(String field, String shown, String rel) {
        int fd = open(field, shown, rel, Sys.O_PATH);
        try {
            Stat st = stat(fd, "", Sys.AT_EMPTY_PATH, field, shown);
            checkReadable(st, shown);
            try {
                return FileChannel.open(proc(fd), StandardOpenOption.READ);
            } catch (IOException e) {
                throw LocalFileIo.failure(shown, e);
            }
        } finally {
            Sys.close(fd);
        }
    }

    private static void checkReadable(Stat st, String shown) {
        if (st.type() == Sys.S_IFDIR) {
            throw LocalFileIo.failure(shown, FileOperationException.Reason.IS_A_DIRECTORY, null);
        }
        if (st.type() != Sys.S_IFREG) {
            throw new FileOperationException(
                    shown,
                    FileOperationException.Reason.PERMISSION_DENIED,
                    shown + ": not a regular file (a FIFO, socket or device); the files API reads regular files only",
                    null);
        }
        if (st.nlink() > 1) {
            throw new FileOperationException(
                    shown,
                    FileOperationException.Reason.PERMISSION_DENIED,
                    shown + ": has " + st.nlink() + " hard links; the files API reads no file with more than one"
                            + " hard link, which may be a file outside the session root",
                    null);
        }
    }

    /** A directory's entries, not following links, sorted by name. */
    List<FileInfo> list(String field, String shown, String rel) {
        return list(field, shown, rel, 1);
    }

    /**
     * A directory's entries to a depth, in pre-order (a directory right before its entries, each directory's entries
     * sorted by name); links are listed, never followed; more than {@link SandboxFiles#LIST_MAX_ENTRIES} entries (or
     * {@link SandboxFiles#LIST_MAX_PATH_CHARS} of paths) fail.
     */
    List<FileInfo> list(String field, String shown, String rel, int depth) {
        int fd = open(field, shown, rel, Sys.O_PATH | Sys.O_DIRECTORY);
        try {
            List<FileInfo> out = new ArrayList<>();
            listInto(fd, display(rel), depth, field, shown, out, new FileArguments.ListBound(shown));
            return out;
        } finally {
            Sys.close(fd);
        }
    }

    private void listInto(
            int fd,
            Path dir,
            int depth,
            String field,
            String shown,
            List<FileInfo> out,
            FileArguments.ListBound bound) {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(proc(fd))) {
            for (Path entry : entries) {
                if (out.size() + names.size() >= SandboxFiles.LIST_MAX_ENTRIES) {
                    throw FileArguments.tooManyEntries(shown);
                }
                names.add(entry.getFileName().toString());
            }
        } catch (IOException e) {
            throw LocalFileIo.failure(shown, e);
        }
        Collections.sort(names);
        for (String name : names) {
            Stat st = statx(fd, name, Sys.AT_SYMLINK_NOFOLLOW);
            if (st == null) { // gone since the listing: skipped
                continue;
            }
            FileInfo info = info(fd, name, dir.resolve(name), field, shown);
            bound.add(info.path());
            out.add(info);
            if (depth > 1 && st.type() == Sys.S_IFDIR) {
                // one component from the open parent, never following a link: stays beneath the root
                int child = Sys.openat(
                        fd, Sys.path(name), Sys.O_PATH | Sys.O_DIRECTORY | Sys.O_NOFOLLOW | Sys.O_CLOEXEC, 0);
                if (child < 0) {
                    int errno = Sys.errno();
                    if (errno == Sys.ENOENT || errno == Sys.ENOTDIR || errno == Sys.ELOOP) {
                        continue; // gone or replaced since: the entry is listed, not its content
                    }
                    throw fail(field, shown, errno);
                }
                try {
                    listInto(child, dir.resolve(name), depth - 1, field, shown, out, bound);
                } finally {
                    Sys.close(child);
                }
            }
        }
    }

    /** Makes a directory and its missing parents; an existing one is fine. Whether its own mkdirat made the last. */
    boolean mkdirs(String field, String shown, String rel) {
        if (rel.isEmpty()) {
            return false;
        }
        boolean made = false;
        String[] parts = rel.split("/");
        int dir = open(field, shown, "", Sys.O_PATH | Sys.O_DIRECTORY);
        try {
            StringBuilder prefix = new StringBuilder();
            for (int i = 0; i < parts.length; i++) {
                if (i > 0) {
                    prefix.append('/');
                }
                prefix.append(parts[i]);
                boolean last = i == parts.length - 1;
                made = Sys.mkdirat(dir, Sys.path(parts[i]), 0777) == 0;
                if (!made) {
                    int errno = Sys.errno();
                    if (errno != Sys.EEXIST) {
                        throw fail(field, shown, errno);
                    }
                    Stat st = statx(dir, parts[i], Sys.AT_SYMLINK_NOFOLLOW);
                    if (last && st != null && st.type() != Sys.S_IFDIR && st.type() != Sys.S_IFLNK) {
                        throw LocalFileIo.failure(shown, FileOperationException.Reason.ALREADY_EXISTS, null);
                    }
                }
                // the next step from the directory made or found, resolved beneath the root again (links may move)
                int next = open(field, shown, prefix.toString(), Sys.O_PATH | Sys.O_DIRECTORY);
                Sys.close(dir);
                dir = next;
            }
            return made;
        } finally {
            Sys.close(dir);
        }
    }

    /** Removes an entry (a final link itself, not its target); a directory's content too when recursive. */
    void remove(String field, String shown, String rel, boolean recursive) {
        if (rel.isEmpty()) {
            throw new InvalidArgumentException(
                    field, field + " '" + shown + "' is the session root, which cannot be removed");
        }
        try (Parent parent = parent(field, shown, rel)) {
            Stat st = stat(parent.fd(), parent.name(), Sys.AT_SYMLINK_NOFOLLOW, field, shown);
            if (st.type() == Sys.S_IFDIR && recursive) {
                removeTree(parent.fd(), parent.name(), field, shown, 0);
            } else if (Sys.unlinkat(
                            parent.fd(), Sys.path(parent.name()), st.type() == Sys.S_IFDIR ? Sys.AT_REMOVEDIR : 0)
                    < 0) {
                throw fail(field, shown, Sys.errno());
            }
        }
    }

    private void removeTree(int parentFd, String name, String field, String shown, int depth) {
        if (depth > MAX_DEPTH) {
            throw new FileOperationException(
                    shown,
                    FileOperationException.Reason.IO_ERROR,
                    shown + ": nested deeper than " + MAX_DEPTH + " directories",
                    null);
        }
        int fd = Sys.openat(
                parentFd, Sys.path(name), Sys.O_RDONLY | Sys.O_DIRECTORY | Sys.O_NOFOLLOW | Sys.O_CLOEXEC, 0);
        if (fd < 0) {
            int errno = Sys.errno();
            if (errno == Sys.ENOENT) {
                return;
            }
            throw fail(field, shown, errno);
        }
        try {
            List<String> names = new ArrayList<>();
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(proc(fd))) {
                for (Path entry : entries) {
                    names.add(entry.getFileName().toString());
                }
            } catch (IOException e) {
                throw LocalFileIo.failure(shown, e);
            }
            for (String child : names) {
                Stat st = statx(fd, child, Sys.AT_SYMLINK_NOFOLLOW);
                if (st == null) {
                    continue;
                }
                if (st.type() == Sys.S_IFDIR) {
                    removeTree(fd, child, field, shown, depth + 1);
                } else if (Sys.unlinkat(fd, Sys.path(child), 0) < 0 && Sys.errno() != Sys.ENOENT) {
                    throw fail(field, shown, Sys.errno());
                }
            }
        } finally {
            Sys.close(fd);
        }
        if (Sys.unlinkat(parentFd, Sys.path(name), Sys.AT_REMOVEDIR) < 0 && Sys.errno() != Sys.ENOENT) {
            throw fail(field, shown, Sys.errno());
        }
    }

    /** Renames an entry; the target must not exist. */
    void move(String from, String fromRel, String to, String toRel) {
        if (fromRel.isEmpty()) {
            throw new InvalidArgumentException(
                    "from", "from '" + from + "' is the session root, which cannot be moved");
        }
        if (toRel.isEmpty()) {
            throw LocalFileIo.failure(to, FileOperationException.Reason.ALREADY_EXISTS, null);
        }
        try (Parent source = parent("from", from, fromRel);
                Parent target = parent("to", to, toRel)) {
            stat(source.fd(), source.name(), Sys.AT_SYMLINK_NOFOLLOW, "from", from);
            byte[] oldName = Sys.path(source.name());
            byte[] newName = Sys.path(target.name());
            if (Sys.renameat2(source.fd(), oldName, target.fd(), newName, Sys.RENAME_NOREPLACE) == 0) {
                return;
            }
            int errno = Sys.errno();
            if (errno == Sys.EINVAL || errno == Sys.ENOSYS || errno == Sys.EOPNOTSUPP) {
                // a file system without RENAME_NOREPLACE: check, then rename (a race here stays inside the root)
                if (statx(target.fd(), target.name(), Sys.AT_SYMLINK_NOFOLLOW) != null) {
                    throw LocalFileIo.failure(to, FileOperationException.Reason.ALREADY_EXISTS, null);
                }
                if (Sys.renameat(source.fd(), oldName, target.fd(), newName) == 0) {
                    return;
                }
                errno = Sys.errno();
            }
            if (errno == Sys.ENOENT) {
                throw fail("from", from, errno);
            }
            throw fail("to", to, errno);
        }
    }

    /** Where a write's temporary file goes: beside the target, relative to the parent's descriptor. */
    LocalFileIo.Destination destination(String field, String shown, String rel) {
        if (rel.isEmpty()) {
            throw LocalFileIo.failure(shown, FileOperationException.Reason.IS_A_DIRECTORY, null);
        }
        Parent parent = parent(field, shown, rel);
        try {
            Stat st = statx(parent.fd(), parent.name(), Sys.AT_SYMLINK_NOFOLLOW);
            if (st != null && st.type() == Sys.S_IFDIR) {
                throw LocalFileIo.failure(shown, FileOperationException.Reason.IS_A_DIRECTORY, null);
            }
        } catch (RuntimeException e) {
            parent.close();
            throw e;
        }
        return new Destination(parent);
    }

    private static final class Destination implements LocalFileIo.Destination {
        private final Parent parent;

        Destination(Parent parent) {
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
                    proc(parent.fd()).resolve(tempName),
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
            return statx(parent.fd(), parent.name(), Sys.AT_SYMLINK_NOFOLLOW) != null;
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

    /** Makes a symbolic link; the entry must not exist. The target is stored as given (it is followed, later, only
     * under the rules above). */
    void symlink(String field, String shown, String rel, String target) {
        if (rel.isEmpty()) {
            throw LocalFileIo.failure(shown, FileOperationException.Reason.ALREADY_EXISTS, null);
        }
        if (target.isEmpty() || target.indexOf('\0') >= 0) {
            throw new InvalidArgumentException("target", "target must be non-empty without NUL bytes");
        }
        try (Parent parent = parent(field, shown, rel)) {
            if (Sys.symlinkat(Sys.path(target), parent.fd(), Sys.path(parent.name())) < 0) {
                throw fail(field, shown, Sys.errno());
            }
        }
    }

    /** Sets permission bits of an entry that is not a symbolic link (a link is left alone). */
    void chmod(String field, String shown, String rel, int mode) {
        try (Parent parent = rel.isEmpty() ? null : parent(field, shown, rel)) {
            int dir = parent == null ? rootFd : parent.fd();
            String name = parent == null ? "." : parent.name();
            int fd = Sys.openat(dir, Sys.path(name), Sys.O_PATH | Sys.O_NOFOLLOW | Sys.O_CLOEXEC, 0);
            if (fd < 0) {
                throw fail(field, shown, Sys.errno());
            }
            try {
                if (stat(fd, "", Sys.AT_EMPTY_PATH | Sys.AT_SYMLINK_NOFOLLOW, field, shown)
                                .type()
                        == Sys.S_IFLNK) {
                    return;
                }
                // through the descriptor's /proc link: the very file that was opened, nothing resolved again
                if (Sys.fchmodat(Sys.AT_FDCWD, Sys.path(proc(fd).toString()), mode & 07777, 0) < 0) {
                    throw fail(field, shown, Sys.errno());
                }
            } finally {
                Sys.close(fd);
            }
        }
    }

    /** Opens a directory beneath the root, for a watch to register; the caller closes it. */
    int openDirectory(String field, String shown, String rel) {
        return open(field, shown, rel, Sys.O_PATH | Sys.O_DIRECTORY);
    }

    /**
     * Opens a directory beneath the root for a recursive watch, not following a final link.
     *
     * @param rel the directory, relative to the root
     * @return the descriptor (the caller closes it), or -1 when it is not a directory, is a link or is gone
     */
    int openSubdirectory(String rel) {
        try (Parent parent = parent("path", rel, rel)) {
            return Sys.openat(
                    parent.fd(),
                    Sys.path(parent.name()),
                    Sys.O_PATH | Sys.O_DIRECTORY | Sys.O_NOFOLLOW | Sys.O_CLOEXEC,
                    0);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** Whether an entry exists, not following a final link. */
    boolean exists(String field, String shown, String rel) {
        if (rel.isEmpty()) {
            return true;
        }
        try (Parent parent = parent(field, shown, rel)) {
            return statx(parent.fd(), parent.name(), Sys.AT_SYMLINK_NOFOLLOW) != null;
        } catch (FileOperationException e) {
            if (e.reason() == FileOperationException.Reason.NOT_FOUND
                    || e.reason() == FileOperationException.Reason.NOT_A_DIRECTORY) {
                return false;
            }
            throw e;
        }
    }
}
