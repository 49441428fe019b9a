package dev.sandbox.implementation.process;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

/**
 * The few libc calls the native launcher needs, bound with JNA direct mapping (no per-call reflection). Linux only;
 * constants are those of the generic Linux ABI shared by x86-64 and AArch64.
 */
final class LibC {
    static final int O_RDONLY = 0;
    static final int O_NONBLOCK = 0x800;
    static final int O_CLOEXEC = 0x80000;
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;

    static final int EPOLLIN = 0x001;
    static final int EPOLLOUT = 0x004;
    static final int EPOLLERR = 0x008;
    static final int EPOLLHUP = 0x010;
    static final int EPOLL_CTL_ADD = 1;
    static final int EPOLL_CTL_DEL = 2;
    static final int EPOLL_CTL_MOD = 3;

    static final int POSIX_SPAWN_SETPGROUP = 0x02;
    static final int POSIX_SPAWN_SETSIGDEF = 0x04;
    static final int POSIX_SPAWN_SETSIGMASK = 0x08;
    static final int POSIX_SPAWN_SETSID = 0x80;

    static final int O_RDWR = 2;
    static final int O_NOCTTY = 0x100;
    static final int F_DUPFD_CLOEXEC = 1030;
    static final long TIOCSWINSZ = 0x5414;

    static final int WNOHANG = 1;
    static final int SIGKILL = 9;
    static final int SIGSTOP = 19;

    static final int EINTR = 4;
    static final int EAGAIN = 11;
    static final int ECHILD = 10;
    static final int ESRCH = 3;

    static final long SYS_PIDFD_OPEN = 434;

    /** Size of {@code struct epoll_event}: packed on x86-64 (12 bytes), naturally aligned elsewhere (16). */
    static final int EPOLL_EVENT_SIZE;
    /** Offset of the {@code data} member in {@code struct epoll_event}. */
    static final int EPOLL_DATA_OFFSET;

    /** Generous upper bounds for glibc's opaque spawn structs (80 and 336 bytes on x86-64). */
    static final int FILE_ACTIONS_SIZE = 512;

    static final int SPAWNATTR_SIZE = 1024;
    static final int SIGSET_SIZE = 128;

    private static final Function ADD_CHDIR;
    private static final Function ADD_CLOSEFROM;

    static {
        NativeLibrary libc = NativeLibrary.getInstance(Platform.C_LIBRARY_NAME);
        Native.register(LibC.class, libc);
        boolean x86 = Platform.isIntel();
        EPOLL_EVENT_SIZE = x86 ? 12 : 16;
        EPOLL_DATA_OFFSET = x86 ? 4 : 8;
        ADD_CHDIR = optional(libc, "posix_spawn_file_actions_addchdir_np");
        ADD_CLOSEFROM = optional(libc, "posix_spawn_file_actions_addclosefrom_np");
    }

    private LibC() {}

    private static Function optional(NativeLibrary libc, String name) {
        try {
            return libc.getFunction(name);
        } catch (UnsatisfiedLinkError e) {
            return null;
        }
    }

    static boolean hasChdirAction() {
        return ADD_CHDIR != null;
    }

    static int addChdir(Pointer fileActions, String dir) {
        return ADD_CHDIR.invokeInt(new Object[] {fileActions, dir});
    }

    /** Closes every descriptor from {@code from} up in the child; returns -1 when glibc lacks it. */
    static int addCloseFrom(Pointer fileActions, int from) {
        return ADD_CLOSEFROM == null ? -1 : ADD_CLOSEFROM.invokeInt(new Object[] {fileActions, from});
    }

    static int errno() {
        return Native.getLastError();
    }

    static native int pipe2(int[] fds, int flags);

    static native long read(int fd, Pointer buf, long count);

    static native long write(int fd, Pointer buf, long count);

    static native int close(int fd);

    static native int fcntl(int fd, int cmd, int arg);

    static native int epoll_create1(int flags);

    static native int epoll_ctl(int epfd, int op, int fd, Pointer event);

    static native int epoll_wait(int epfd, Pointer events, int maxevents, int timeout);

    static native int eventfd(int initval, int flags);

    static native int kill(int pid, int sig);

    static native int waitpid(int pid, int[] status, int options);

    static native long syscall(long number, long arg1, long arg2);

    static native int posix_spawn(
            int[] pid, String path, Pointer fileActions, Pointer attr, Pointer argv, Pointer envp);

    static native int posix_spawn_file_actions_init(Pointer fileActions);

    static native int posix_spawn_file_actions_destroy(Pointer fileActions);

    static native int posix_spawn_file_actions_adddup2(Pointer fileActions, int fd, int newfd);

    static native int posix_spawn_file_actions_addopen(Pointer fileActions, int fd, String path, int oflag, int mode);

    static native int posix_spawnattr_init(Pointer attr);

    static native int posix_spawnattr_destroy(Pointer attr);

    static native int posix_spawnattr_setflags(Pointer attr, short flags);

    static native int posix_spawnattr_setpgroup(Pointer attr, int pgroup);

    static native int posix_spawnattr_setsigmask(Pointer attr, Pointer sigmask);

    static native int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigdefault);

    static native int sigemptyset(Pointer set);

    static native int sigfillset(Pointer set);

    static native int sigdelset(Pointer set, int signo);

    static native String strerror(int errnum);

    static native int posix_openpt(int flags);

    static native int grantpt(int fd);

    static native int unlockpt(int fd);

    static native int ptsname_r(int fd, Pointer buf, long buflen);

    static native int ioctl(int fd, long request, Pointer arg);
}
