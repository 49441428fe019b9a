package dev.sandbox.implementation.local;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;

/**
 * The libc and Linux calls the local session root and the crash reaper need, bound with JNA direct mapping. Linux
 * only; flag values differ between x86-64 and AArch64 where noted. Paths go in as NUL-terminated bytes.
 */
final class Sys {
    static final boolean ARM = Platform.isARM();

    static final int O_RDONLY = 0;
    static final int O_WRONLY = 1;
    static final int O_CREAT = 0x40;
    static final int O_EXCL = 0x80;
    static final int O_NOCTTY = 0x100;
    static final int O_NONBLOCK = 0x800;
    static final int O_DIRECTORY = ARM ? 0x4000 : 0x10000;
    static final int O_NOFOLLOW = ARM ? 0x8000 : 0x20000;
    static final int O_CLOEXEC = 0x80000;
    static final int O_PATH = 0x200000;

    static final int AT_FDCWD = -100;
    static final int AT_SYMLINK_NOFOLLOW = 0x100;
    static final int AT_REMOVEDIR = 0x200;
    static final int AT_EMPTY_PATH = 0x1000;

    static final long RESOLVE_NO_MAGICLINKS = 0x02;
    static final long RESOLVE_BENEATH = 0x08;

    static final int RENAME_NOREPLACE = 1;

    static final int EPERM = 1;
    static final int ENOENT = 2;
    static final int ESRCH = 3;
    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int EACCES = 13;
    static final int EEXIST = 17;
    static final int EXDEV = 18;
    static final int ENOTDIR = 20;
    static final int EISDIR = 21;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int ENAMETOOLONG = 36;
    static final int ENOSYS = 38;
    static final int ENOTEMPTY = 39;
    static final int ELOOP = 40;
    static final int EOPNOTSUPP = 95;

    /** The same number on x86-64 and AArch64 (the unified table since Linux 5.1). */
    static final long SYS_OPENAT2 = 437;

    static final long SYS_PIDFD_OPEN = 434;
    static final long SYS_PIDFD_SEND_SIGNAL = 424;
    static final int SIGKILL = 9;
    static final int SIGCONT = 18;
    static final int SIGSTOP = 19;
    static final short POLLIN = 1;

    /** Size of {@code struct open_how}: flags, mode, resolve. */
    static final int OPEN_HOW_SIZE = 24;

    /** Size of {@code struct statx}, the same on every architecture. */
    static final int STATX_SIZE = 256;

    static final int STATX_BASIC_STATS = 0x7ff;
    static final int STATX_NLINK_OFFSET = 16;
    static final int STATX_UID_OFFSET = 20;
    static final int STATX_GID_OFFSET = 24;
    static final int STATX_MODE_OFFSET = 28;
    static final int STATX_SIZE_OFFSET = 40;
    static final int STATX_MTIME_OFFSET = 112;

    static final int S_IFMT = 0170000;
    static final int S_IFDIR = 0040000;
    static final int S_IFREG = 0100000;
    static final int S_IFLNK = 0120000;

    static {
        Native.register(Sys.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
    }

    private Sys() {}

    static byte[] path(String path) {
        byte[] utf8 = path.getBytes(StandardCharsets.UTF_8);
        byte[] z = new byte[utf8.length + 1];
        System.arraycopy(utf8, 0, z, 0, utf8.length);
        return z;
    }

    static int errno() {
        return Native.getLastError();
    }

    static native String strerror(int errnum);

    static native int openat(int dirfd, byte[] path, int flags, int mode);

    /** {@code syscall(2)} with up to four arguments, pointers or numbers passed as {@link Pointer}s. */
    static native long syscall(long number, long a1, Pointer a2, Pointer a3, long a4);

    /** {@code syscall(2)} with a path as its second argument, as {@code openat2} takes. */
    static native long syscall(long number, long a1, byte[] a2, Pointer a3, long a4);

    static native int statx(int dirfd, byte[] path, int flags, int mask, Pointer buf);

    static native int mkdirat(int dirfd, byte[] path, int mode);

    static native int unlinkat(int dirfd, byte[] path, int flags);

    static native int symlinkat(byte[] target, int newdirfd, byte[] linkpath);

    static native int fchmodat(int dirfd, byte[] path, int mode, int flags);

    static native int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath);

    static native int renameat2(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath, int flags);

    static native long readlinkat(int dirfd, byte[] path, byte[] buf, long size);

    static native int close(int fd);

    static native int kill(int pid, int sig);

    static native int getuid();

    static native int poll(Pointer fds, long nfds, int timeout);

    static native long read(int fd, byte[] buf, long count);

    static native long write(int fd, byte[] buf, long count);

    static native int eventfd(int initval, int flags);

    static native int inotify_init1(int flags);

    static native int inotify_add_watch(int fd, byte[] path, int mask);

    static native int inotify_rm_watch(int fd, int wd);
}
