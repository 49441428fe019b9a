package dev.sandbox.implementation.process;

import com.sun.jna.Memory;
import com.sun.jna.StringArray;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Spawns processes with {@code posix_spawn} into their own process group, with non-blocking pipes, and watches them
 * from one shared {@link EpollLoop}: no thread per process, and pipes are read only while a subscriber asks for data.
 */
final class NativeLauncher implements ProcessLauncher {

    private final EpollLoop loop;

    private NativeLauncher(EpollLoop loop) {
        this.loop = loop;
    }

    static NativeLauncher create() {
        if (!LibC.hasChdirAction()) {
            throw new IllegalStateException("libc lacks posix_spawn_file_actions_addchdir_np");
        }
        long pidfd = LibC.syscall(LibC.SYS_PIDFD_OPEN, ProcessHandle.current().pid(), 0);
        if (pidfd < 0) {
            throw new IllegalStateException("pidfd_open is not available: " + LibC.strerror(LibC.errno()));
        }
        LibC.close((int) pidfd);
        return new NativeLauncher(new EpollLoop());
    }

    /** Whether this launcher's I/O loop has a thread now; for tests. */
    boolean loopRunning() {
        return loop.running();
    }

    @Override
    public String name() {
        return "native-epoll";
    }

    @Override
    public SpawnedProcess spawn(ProcessSpec spec) {
        int[] out = pipe();
        int[] err = null;
        int[] in = null;
        Memory actions = new Memory(LibC.FILE_ACTIONS_SIZE);
        Memory attr = new Memory(LibC.SPAWNATTR_SIZE);
        boolean actionsInit = false;
        boolean attrInit = false;
        int pid = -1;
        try {
            err = pipe();
            if (spec.stdin() != null) {
                in = pipe();
            }
            check(LibC.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init");
            actionsInit = true;
            if (in != null) {
                check(LibC.posix_spawn_file_actions_adddup2(actions, in[0], 0), "adddup2 stdin");
            } else {
                check(
                        LibC.posix_spawn_file_actions_addopen(actions, 0, "/dev/null", LibC.O_RDONLY, 0),
                        "addopen /dev/null");
            }
            check(LibC.posix_spawn_file_actions_adddup2(actions, out[1], 1), "adddup2 stdout");
            check(LibC.posix_spawn_file_actions_adddup2(actions, err[1], 2), "adddup2 stderr");
            check(LibC.addChdir(actions, spec.cwd()), "addchdir");
            LibC.addCloseFrom(actions, 3);

            check(LibC.posix_spawnattr_init(attr), "posix_spawnattr_init");
            attrInit = true;
            check(LibC.posix_spawnattr_setpgroup(attr, 0), "setpgroup");
            cleanSignals(attr, LibC.POSIX_SPAWN_SETPGROUP);

            StringArray argv = new StringArray(spec.argv().toArray(new String[0]), "UTF-8");
            StringArray envp = new StringArray(envStrings(spec.env()), "UTF-8");
            int[] pidOut = new int[1];
            int rc = LibC.posix_spawn(pidOut, spec.program(), actions, attr, argv, envp);
            if (rc != 0) {
                throw LaunchErrors.failure("cannot start " + spec.program() + " in " + spec.cwd(), rc);
            }
            pid = pidOut[0];
        } finally {
            if (actionsInit) {
                LibC.posix_spawn_file_actions_destroy(actions);
            }
            if (attrInit) {
                LibC.posix_spawnattr_destroy(attr);
            }
            // the child's ends: the child has its own copies now
            LibC.close(out[1]);
            if (err != null) {
                LibC.close(err[1]);
            }
            if (in != null) {
                LibC.close(in[0]);
            }
            if (pid < 0) {
                LibC.close(out[0]);
                if (err != null) {
                    LibC.close(err[0]);
                }
                if (in != null) {
                    LibC.close(in[1]);
                }
            }
        }
        long pidfd = LibC.syscall(LibC.SYS_PIDFD_OPEN, pid, 0);
        if (pidfd < 0) {
            int e = LibC.errno();
            LibC.kill(-pid, LibC.SIGKILL);
            LibC.waitpid(pid, new int[1], 0);
            LibC.close(out[0]);
            LibC.close(err[0]);
            if (in != null) {
                LibC.close(in[1]);
            }
            throw LaunchErrors.failure("pidfd_open failed for pid " + pid, e);
        }
        nonBlocking(out[0]);
        nonBlocking(err[0]);
        if (in != null) {
            nonBlocking(in[1]);
        }
        NativeProcess process = new NativeProcess(loop, pid, (int) pidfd, out[0], err[0], in == null ? -1 : in[1], -1);
        process.start(spec.stdin());
        return process;
    }

    @Override
    public SpawnedProcess spawnPty(ProcessSpec spec, int cols, int rows) {
        int master = LibC.posix_openpt(LibC.O_RDWR | LibC.O_NOCTTY | LibC.O_CLOEXEC);
        if (master < 0) {
            throw LaunchErrors.failure("posix_openpt failed", LibC.errno());
        }
        int writer = -1;
        Memory actions = new Memory(LibC.FILE_ACTIONS_SIZE);
        Memory attr = new Memory(LibC.SPAWNATTR_SIZE);
        boolean actionsInit = false;
        boolean attrInit = false;
        int pid = -1;
        try {
            if (LibC.grantpt(master) != 0 || LibC.unlockpt(master) != 0) {
                throw LaunchErrors.failure("cannot unlock the terminal", LibC.errno());
            }
            Memory name = new Memory(256);
            check(LibC.ptsname_r(master, name, 256), "ptsname_r");
            String slave = name.getString(0);
            Memory size = new Memory(8);
            size.setShort(0, (short) rows);
            size.setShort(2, (short) cols);
            size.setInt(4, 0);
            LibC.ioctl(master, LibC.TIOCSWINSZ, size);

            check(LibC.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init");
            actionsInit = true;
            // the child is a session leader (SETSID) without a terminal: opening the slave makes it its terminal
            check(LibC.posix_spawn_file_actions_addopen(actions, 0, slave, LibC.O_RDWR, 0), "addopen terminal");
            check(LibC.posix_spawn_file_actions_adddup2(actions, 0, 1), "adddup2 stdout");
            check(LibC.posix_spawn_file_actions_adddup2(actions, 0, 2), "adddup2 stderr");
            check(LibC.addChdir(actions, spec.cwd()), "addchdir");
            LibC.addCloseFrom(actions, 3);

            check(LibC.posix_spawnattr_init(attr), "posix_spawnattr_init");
            attrInit = true;
            cleanSignals(attr, LibC.POSIX_SPAWN_SETSID);
            StringArray argv = new StringArray(spec.argv().toArray(new String[0]), "UTF-8");
            StringArray envp = new StringArray(envStrings(spec.env()), "UTF-8");
            int[] pidOut = new int[1];
            int rc = LibC.posix_spawn(pidOut, spec.program(), actions, attr, argv, envp);
            if (rc != 0) {
                throw LaunchErrors.failure("cannot start " + spec.program() + " in " + spec.cwd(), rc);
            }
            pid = pidOut[0];
            writer = LibC.fcntl(master, LibC.F_DUPFD_CLOEXEC, 3);
        } finally {
            if (actionsInit) {
                LibC.posix_spawn_file_actions_destroy(actions);
            }
            if (attrInit) {
                LibC.posix_spawnattr_destroy(attr);
            }
            if (pid < 0) {
                LibC.close(master);
            }
        }
        long pidfd = LibC.syscall(LibC.SYS_PIDFD_OPEN, pid, 0);
        if (pidfd < 0 || writer < 0) {
            int e = LibC.errno();
            LibC.kill(-pid, LibC.SIGKILL);
            LibC.waitpid(pid, new int[1], 0);
            LibC.close(master);
            if (writer >= 0) {
                LibC.close(writer);
            }
            throw LaunchErrors.failure("cannot watch pid " + pid, e);
        }
        nonBlocking(master);
        nonBlocking(writer);
        NativeProcess process = new NativeProcess(loop, pid, (int) pidfd, master, -1, writer, master);
        process.start(spec.stdin());
        return process;
    }

    /**
     * Sets the spawn flags: the given ones, plus an empty signal mask and default handlers for every signal, so
     * nothing the JVM blocks or ignores leaks into the child.
     */
    private static void cleanSignals(Memory attr, int flags) {
        Memory mask = new Memory(LibC.SIGSET_SIZE);
        LibC.sigemptyset(mask);
        check(LibC.posix_spawnattr_setsigmask(attr, mask), "setsigmask");
        Memory defaults = new Memory(LibC.SIGSET_SIZE);
        LibC.sigfillset(defaults);
        LibC.sigdelset(defaults, LibC.SIGKILL);
        LibC.sigdelset(defaults, LibC.SIGSTOP);
        check(LibC.posix_spawnattr_setsigdefault(attr, defaults), "setsigdefault");
        check(
                LibC.posix_spawnattr_setflags(
                        attr, (short) (flags | LibC.POSIX_SPAWN_SETSIGMASK | LibC.POSIX_SPAWN_SETSIGDEF)),
                "setflags");
    }

    private static String[] envStrings(Map<String, String> env) {
        List<String> list = new ArrayList<>(env.size());
        env.forEach((k, v) -> list.add(k + "=" + v));
        return list.toArray(new String[0]);
    }

    private static int[] pipe() {
        int[] fds = new int[2];
        if (LibC.pipe2(fds, LibC.O_CLOEXEC) != 0) {
            throw LaunchErrors.failure("pipe2 failed", LibC.errno());
        }
        return fds;
    }

    private static void nonBlocking(int fd) {
        int flags = LibC.fcntl(fd, LibC.F_GETFL, 0);
        LibC.fcntl(fd, LibC.F_SETFL, flags | LibC.O_NONBLOCK);
    }

    private static void check(int rc, String what) {
        if (rc != 0) {
            throw LaunchErrors.failure(what + " failed", rc);
        }
    }
}
